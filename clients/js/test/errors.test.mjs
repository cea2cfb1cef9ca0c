// The daemon's refusals and failed jobs arrive as CuzkError with its status, code and message.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { connect, CuzkError } from "../index.js";
import { env } from "./setup.mjs";

const cuzk = connect({ socket: env.fast.socket });

// Asserts that p rejects with a CuzkError matching the fields of want, message by regexp.
async function rejects(p, want) {
  const e = await p.then(() => assert.fail("resolved; expected a CuzkError"), (e) => e);
  assert.ok(e instanceof CuzkError, `not a CuzkError: ${e?.stack ?? e}`);
  assert.ok(e instanceof Error);
  for (const [k, v] of Object.entries(want)) {
    if (v instanceof RegExp) assert.match(e[k], v, `${k}: ${e[k]}`);
    else assert.equal(e[k], v, `${k} of '${e.message}'`);
  }
  return e;
}

test("an unknown signal is a 400 naming the partition and the signal", async () => {
  await rejects(cuzk.fullProve(env.circuit, { a: 1, b: 2, c: 3 }),
                { status: 400, code: 400, message: /inputs\[0\]: signal 'c' is not an input/ });
});

test("a value that is not a number is a 400 naming the signal", async () => {
  await rejects(cuzk.prove(env.circuit, [{ a: 1, b: 2 }, { a: "abc", b: 2 }]),
                { status: 400, message: /inputs\[1\]: signal 'a': 'abc' is not a decimal number/ });
});

test("a missing signal, an unknown circuit, inputs for a witness-only circuit", async () => {
  await rejects(cuzk.fullProve(env.circuit, { a: 1 }), { status: 400, message: /missing input signal 'b'/ });
  await rejects(cuzk.fullProve("no_such_circuit", { a: 1, b: 2 }), { status: 400, message: /no_such_circuit/ });
  await rejects(cuzk.fullProve(env.witnessCircuit, { a: 1, b: 2 }), { status: 400, message: new RegExp(env.witnessCircuit) });
});

test("a job that fails carries the job id and the reason", async () => {
  const e = await rejects(cuzk.fullProve(env.crashCircuit, { a: 1, b: 2 }, { timeout: 30_000 }),
                          { code: "EJOBFAILED", message: /Segmentation fault/, partition: 0 });
  assert.match(e.jobId, /^\d+$/);
  assert.match(e.message, new RegExp(`job ${e.jobId} failed`));
  assert.equal(e.job.state, "failed");
  assert.equal(e.status, undefined);
});

test("an unknown job is a 404 with its id", async () => {
  await rejects(cuzk.job("999999"), { status: 404, code: 404, jobId: "999999", message: /no job 999999/ });
  await rejects(cuzk.cancel("999999"), { status: 404, jobId: "999999" });
});

test("a daemon that is not there, and arguments that cannot be sent", async () => {
  const gone = connect({ socket: path.join(path.dirname(env.fast.socket), "nothing.sock") });
  await rejects(gone.status(), { code: "ENOENT", message: /cannot reach the daemon/ });
  await assert.rejects(cuzk.prove(env.circuit, { a: 1, b: 2 }), TypeError);
  assert.throws(() => connect({}), TypeError);
  assert.throws(() => connect({ url: "https://127.0.0.1:1" }), TypeError);
});
