#!/usr/bin/env node
// Checks a sector witness against an independent SHA-256 (node's crypto): every challenge's label in
// the witness must be the low 254 bits of SHA-256(replicaId || index || 24 zero bytes || parents),
// each field element 32 bytes big-endian, the index 8 bytes big-endian. Also prints commR.
//
//   node check_labels.mjs IN.json CIRCUIT.sym WITNESS.wtns
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [inPath, symPath, wtnsPath] = process.argv.slice(2);
if (!wtnsPath) {
  console.error("usage: node check_labels.mjs IN.json CIRCUIT.sym WITNESS.wtns");
  process.exit(2);
}
const input = JSON.parse(readFileSync(inPath, "utf8"));

// .sym lines: labelIndex,witnessIndex,componentIndex,name (witnessIndex -1: eliminated). The file
// outgrows a JavaScript string from about 2^20 constraints: read it line by line.
const witnessIndex = new Map();
for await (const line of createInterface({ input: createReadStream(symPath), crlfDelay: Infinity })) {
  if (!line.endsWith("label") && !line.endsWith("commR")) continue;
  const m = line.match(/^\d+,(-?\d+),\d+,(main\.(?:label\[\d+\]\.label|commR))$/);
  if (m) witnessIndex.set(m[2], Number(m[1]));
}

// .wtns: "wtns", version, section count, then (type u32, size u64, body) sections; section 1 holds
// n8, the prime and the witness count, section 2 the values, n8 bytes little-endian each.
const w = readFileSync(wtnsPath);
if (w.toString("latin1", 0, 4) !== "wtns") throw new Error(`${wtnsPath} is not a .wtns file`);
let pos = 12;
const sections = new Map();
while (pos < w.length) {
  const type = w.readUInt32LE(pos);
  const size = Number(w.readBigUInt64LE(pos + 4));
  sections.set(type, [pos + 12, size]);
  pos += 12 + size;
}
const [h] = sections.get(1);
const n8 = w.readUInt32LE(h);
const nWitness = w.readUInt32LE(h + 4 + n8);
const [body] = sections.get(2);
function value(i) {
  if (i < 0 || i >= nWitness) throw new Error(`witness index ${i} out of range`);
  const le = Buffer.from(w.subarray(body + i * n8, body + (i + 1) * n8));
  return BigInt("0x" + (le.reverse().toString("hex") || "0"));
}

const be32 = (v) => Buffer.from(BigInt(v).toString(16).padStart(64, "0"), "hex");
const be8 = (v) => Buffer.from(BigInt(v).toString(16).padStart(16, "0"), "hex");
let bad = 0;
for (let k = 0; k < input.challenge.length; k++) {
  const msg = Buffer.concat([
    be32(input.replicaId),
    be8(input.challenge[k]),
    Buffer.alloc(24),
    ...input.parents[k].map(be32),
  ]);
  const digest = BigInt("0x" + createHash("sha256").update(msg).digest("hex"));
  const want = digest & ((1n << 254n) - 1n);
  const name = `main.label[${k}].label`;
  if (!witnessIndex.has(name) || witnessIndex.get(name) < 0) {
    console.error(`${name} is not in the witness (eliminated by the optimiser): cannot check`);
    process.exit(1);
  }
  const got = value(witnessIndex.get(name));
  if (got !== want) {
    console.error(`challenge ${k}: label ${got} in the witness, SHA-256 gives ${want}`);
    bad++;
  }
}
if (bad) process.exit(1);
console.log(`${input.challenge.length} labels match SHA-256; commR = ${value(witnessIndex.get("main.commR"))}`);
