// Verifies many proofs in one process (snarkjs' groth16.verify), where one `snarkjs groth16 verify`
// per proof would cost a node start each. Prints one line per rejected proof and a summary; exits 1
// when any proof is rejected or missing.
//   node verify_all.js SNARKJS_DIR VK_JSON N DIR...   each DIR holds proof_<i>.json and public_<i>.json
//                                                     for i < N (written by `cuzk await --out DIR`)
"use strict";
const fs = require("fs");
const path = require("path");
const [dir, vkPath, nText, ...outs] = process.argv.slice(2);
const snarkjs = require(path.join(dir, "build", "main.cjs"));

(async () => {
  const vk = JSON.parse(fs.readFileSync(vkPath, "utf8"));
  const n = +nText;
  let ok = 0, bad = 0;
  for (const out of outs) {
    for (let i = 0; i < n; i++) {
      const pf = path.join(out, `proof_${i}.json`), pb = path.join(out, `public_${i}.json`);
      if (!fs.existsSync(pf) || !fs.existsSync(pb)) {
        console.log(`missing: ${pf}`);
        bad++;
        continue;
      }
      const proof = JSON.parse(fs.readFileSync(pf, "utf8"));
      const pub = JSON.parse(fs.readFileSync(pb, "utf8"));
      if (await snarkjs.groth16.verify(vk, pub, proof, { info() {}, debug() {}, warn() {}, error() {} })) ok++;
      else {
        console.log(`rejected: ${pf}`);
        bad++;
      }
    }
  }
  console.log(`verified ${ok} proofs, ${bad} rejected or missing`);
  process.exit(bad ? 1 : 0);
})().catch((e) => {
  console.log(`error: ${e.message}`);
  process.exit(1);
});
