// Cancel and timeouts, on the daemon whose proofs take seconds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, CuzkError } from "../index.js";
import { env, snarkjs, until, vkey } from "./setup.mjs";

const cuzk = connect({ socket: env.slow.socket });
const FINAL = ["done", "failed", "cancelled"];

test("a timeout rejects naming the job, and leaves the job running", async () => {
  const t0 = Date.now();
  const e = await cuzk.fullProve(env.circuit, { a: 3, b: 5 }, { timeout: 200 }).then(
    () => assert.fail("the slow proof came within 200 ms"), (e) => e);
  const took = Date.now() - t0;
  assert.ok(e instanceof CuzkError, String(e));
  assert.equal(e.code, "ETIMEDOUT");
  assert.match(e.jobId, /^\d+$/);
  assert.match(e.message, new RegExp(`job ${e.jobId}\\b`));
  assert.ok(took >= 190 && took < 2000, `the timeout took ${took} ms`);
  // Not cancelled: the job goes on, and its result can still be awaited.
  const job = await cuzk.job(e.jobId);
  assert.ok(!FINAL.includes(job.state), `state ${job.state} after the timeout`);
  const [r] = await cuzk.result(e.jobId, { timeout: 30_000 });
  assert.deepEqual(r.publicSignals, ["15"]);
  assert.equal(await snarkjs.groth16.verify(vkey, r.publicSignals, r.proof), true);
});

test("a long poll that ends before the job does is asked again", async () => {
  const id = await cuzk.submit(env.circuit, [{ a: 1, b: 1 }]);
  const t0 = Date.now();
  const early = await cuzk.job(id, { wait: 300 });
  assert.ok(!FINAL.includes(early.state), `state ${early.state}`);
  assert.ok(Date.now() - t0 >= 250, "the long poll did not wait");
  await assert.rejects(cuzk.wait(id, { timeout: 500 }), { code: "ETIMEDOUT", jobId: id });
  await cuzk.cancel(id);
});

test("cancel stops a job in flight; its waiters learn it", async () => {
  const id = await cuzk.submit(env.circuit, [{ a: 2, b: 2 }]);
  await until("the partition to be proved", 20_000, async () => (await cuzk.job(id)).partitions[0].state === "proving");
  // Its handler is attached at once: a rejection without one would fail the test on its own.
  const t0 = Date.now();
  let told;
  const waiting = assert.rejects(cuzk.result(id, { timeout: 20_000 }), (e) => {
    told = Date.now() - t0;
    return e instanceof CuzkError && e.code === "ECANCELLED" && e.jobId === id && e.job.state === "cancelled";
  });
  assert.deepEqual(await cuzk.cancel(id), { id, state: "cancelled" });
  await waiting;
  assert.ok(told < 3000, `the waiter learnt of the cancel after ${told} ms`);
  const job = await cuzk.job(id);
  assert.equal(job.state, "cancelled");
  // Cancelling a final job is the daemon's 409.
  await assert.rejects(cuzk.cancel(id), (e) => e instanceof CuzkError && e.status === 409 && e.jobId === id);
});
