// What the tests share: the daemons that test/harness.mjs started (CUZK_JS_TEST), the circuit's
// verification key, and snarkjs from the repository's own node_modules.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after } from "node:test";

if (!process.env.CUZK_JS_TEST) throw new Error("run the tests through test/harness.mjs (ctest -R clients.js): it starts the daemons");
export const env = JSON.parse(process.env.CUZK_JS_TEST);
export const snarkjs = createRequire(path.join(env.src, "package.json"))("snarkjs");
export const vkey = JSON.parse(fs.readFileSync(env.vkey, "utf8"));

// snarkjs keeps its curve's worker threads alive, which would hold the test process open.
after(async () => {
  await globalThis.curve_bls12381?.terminate();
  await globalThis.curve_bn128?.terminate();
});

// Polls f() every 50 ms until it is truthy, for up to ms.
export async function until(what, ms, f) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
