// TCP with the daemon's bearer token.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connect, CuzkError } from "../index.js";
import { env, snarkjs, vkey } from "./setup.mjs";

test("connect({url, token}) proves over TCP", async () => {
  const cuzk = connect({ url: env.fast.url, token: env.fast.token });
  const { proof, publicSignals } = await cuzk.fullProve(env.circuit, { a: 6, b: 7 });
  assert.deepEqual(publicSignals, ["42"]);
  assert.equal(await snarkjs.groth16.verify(vkey, publicSignals, proof), true);
  assert.ok(Array.isArray((await cuzk.status()).workers));
});

test("a wrong or missing token is a 401", async () => {
  for (const token of ["wrong", undefined]) {
    const cuzk = connect({ url: env.fast.url, token });
    await assert.rejects(cuzk.status(), (e) => e instanceof CuzkError && e.status === 401 && /bearer token/.test(e.message));
    await assert.rejects(cuzk.fullProve(env.circuit, { a: 1, b: 2 }), (e) => e instanceof CuzkError && e.status === 401);
  }
});

test("a job sent over the socket is not a TCP client's", async () => {
  const id = await connect({ socket: env.fast.socket }).submit(env.circuit, [{ a: 1, b: 2 }]);
  const tcp = connect({ url: env.fast.url, token: env.fast.token });
  await assert.rejects(tcp.job(id), (e) => e instanceof CuzkError && e.status === 404 && e.jobId === id);
});
