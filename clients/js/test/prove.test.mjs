// Proofs over the unix socket, checked by snarkjs against the circuit's verification key, in the
// exact form snarkjs.groth16.fullProve gives them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect } from "../index.js";
import { env, snarkjs, vkey } from "./setup.mjs";

const cuzk = connect({ socket: env.fast.socket });

// A value's form: every string becomes "string", except the fields that must match exactly.
function shape(v, key) {
  if (Array.isArray(v)) return v.map((x) => shape(x));
  if (v && typeof v === "object") return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape(v[k], k)]));
  if (typeof v === "string") return key === "protocol" || key === "curve" ? v : /^\d+$/.test(v) ? "decimal" : "string";
  return typeof v;
}

test("fullProve returns what snarkjs.groth16.fullProve returns, and snarkjs verifies it", async () => {
  // snarkjs takes bigint and number values; so must the client.
  const input = { a: 3n, b: 11 };
  const ours = await cuzk.fullProve(env.circuit, input);
  assert.equal(await snarkjs.groth16.verify(vkey, ours.publicSignals, ours.proof), true, "snarkjs rejects the proof");
  const theirs = await snarkjs.groth16.fullProve(input, env.wasm, env.zkey);
  assert.deepEqual(Object.keys(ours).sort(), ["proof", "publicSignals"]);
  assert.deepEqual(shape(ours), shape(theirs));
  assert.deepEqual(ours.publicSignals, theirs.publicSignals);
  assert.deepEqual(ours.publicSignals, ["33"]);
  assert.equal(ours.proof.protocol, "groth16");
});

test("prove takes several inputs as one job, results in order", async () => {
  const inputs = [{ a: 2, b: 5 }, { a: "7", b: "0x3" }, { a: 13, b: 1 }];
  const requestId = `three-${process.pid}`;
  const results = await cuzk.prove(env.circuit, inputs, { priority: "high", requestId });
  assert.equal(results.length, 3);
  assert.deepEqual(results.map((r) => r.publicSignals), [["10"], ["21"], ["13"]]);
  for (const [i, r] of results.entries())
    assert.equal(await snarkjs.groth16.verify(vkey, r.publicSignals, r.proof), true, `snarkjs rejects proof ${i}`);
  // The same request id names the same job: one job of three partitions, at the priority given.
  const id = await cuzk.submit(env.circuit, inputs, { priority: "high", requestId });
  const job = await cuzk.job(id);
  assert.equal(job.request_id, requestId);
  assert.equal(job.priority, "high");
  assert.equal(job.input_kind, "inputs");
  assert.equal(job.partitions.length, 3);
});

test("submit, job with wait, and result are the steps fullProve takes", async () => {
  const id = await cuzk.submit(env.circuit, [{ a: 4, b: 4 }]);
  assert.match(id, /^\d+$/);
  const job = await cuzk.job(id, { wait: 30_000 });
  assert.equal(job.state, "done");
  assert.equal(job.id, id);
  const [r] = await cuzk.result(id);
  assert.deepEqual(r.publicSignals, ["16"]);
  assert.deepEqual(r.proof, job.partitions[0].proof);
  assert.deepEqual(await cuzk.wait(id), job);
});

test("status lists the workers", async () => {
  const s = await cuzk.status();
  assert.equal(s.backend, "cpu");
  assert.ok(Array.isArray(s.workers), "no workers list");
  assert.deepEqual(s.workers.map((w) => w.kind).sort(), ["gpu", "synth"]);
  assert.ok(s.workers.every((w) => typeof w.name === "string" && typeof w.state === "string"));
});
