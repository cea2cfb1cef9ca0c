#!/usr/bin/env node
// Input generator for the sector circuit (sector.circom): a deterministic, valid input JSON for any
// seed. commR is the circuit's output, so any private values are valid; the generator only has to
// respect the circuit's ranges (field elements below 2^254, each challenge in its own segment).
//
//   node gen_input.mjs --seed N --out in.json [--circuit sector_20.circom]
//   node gen_input.mjs --seed N --out in.json --log-k 4 --depth 30 --parents 1
//
// The sizes (logK, D, P) are read from the circuit's main line `SectorProof(logK, D, P)` (default:
// sector_16.circom beside this script), or given with --log-k/--depth/--parents. Each seed gives a
// different sector (replicaId), different challenges and different private data: one seed per
// partition. The values come from SHA-256 in counter mode over the seed, so they do not depend on the
// node version or platform.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

function usage(msg) {
  if (msg) console.error(`gen_input: ${msg}`);
  console.error(
    "usage: node gen_input.mjs --seed N --out FILE [--circuit MAIN.circom | --log-k K --depth D --parents P]",
  );
  process.exit(2);
}

const opts = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "-h" || a === "--help") usage();
  if (!a.startsWith("--") || i + 1 >= argv.length) usage(`bad argument ${a}`);
  opts[a.slice(2)] = argv[++i];
}
const known = ["seed", "out", "circuit", "log-k", "depth", "parents"];
for (const k of Object.keys(opts)) if (!known.includes(k)) usage(`unknown option --${k}`);
if (opts.seed === undefined) usage("--seed is required");
if (opts.out === undefined) usage("--out is required");
if (!/^[0-9]+$/.test(opts.seed)) usage(`--seed must be a non-negative integer, not ${opts.seed}`);

function int(name, v) {
  if (!/^[0-9]+$/.test(v)) usage(`${name} must be a non-negative integer, not ${v}`);
  return Number(v);
}

// The sizes: from the main line of the circuit, then any explicit overrides.
let logK, depth, parents;
const explicit = ["log-k", "depth", "parents"].filter((k) => opts[k] !== undefined);
if (explicit.length !== 3) {
  if (explicit.length !== 0) usage("give all of --log-k, --depth and --parents, or none");
  const main = opts.circuit ?? join(here, "sector_16.circom");
  const src = readFileSync(main, "utf8");
  const m = src.match(/component\s+main[^=]*=\s*SectorProof\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)/);
  if (!m) usage(`${main} has no "component main ... = SectorProof(logK, D, P)" line`);
  [logK, depth, parents] = m.slice(1, 4).map(Number);
} else {
  if (opts.circuit !== undefined) usage("--circuit and --log-k/--depth/--parents exclude each other");
  logK = int("--log-k", opts["log-k"]);
  depth = int("--depth", opts.depth);
  parents = int("--parents", opts.parents);
}
// The circuit's own asserts.
if (logK > 10) usage(`logK ${logK} > 10`);
if (depth > 64 || depth - logK < 1) usage(`depth ${depth} must be in [logK + 1, 64]`);
if (parents < 1) usage("at least one parent");

// SHA-256 in counter mode over a domain tag and the seed.
let counter = 0n;
let pool = Buffer.alloc(0);
function bytes(n) {
  while (pool.length < n) {
    const block = createHash("sha256")
      .update(`cuzk sector input v1/seed=${opts.seed}/block=${counter++}`)
      .digest();
    pool = Buffer.concat([pool, block]);
  }
  const out = pool.subarray(0, n);
  pool = pool.subarray(n);
  return out;
}
function bits(n) {  // a uniform integer below 2^n
  const b = bytes(Math.ceil(n / 8));
  const v = BigInt("0x" + b.toString("hex"));
  return v & ((1n << BigInt(n)) - 1n);
}
const fe = () => bits(254).toString();  // below 2^254 < r: valid for every field-element input

const K = 1 << logK;
const L = depth - logK;
const input = {
  replicaId: fe(),
  challenge: [],
  parents: [],
  data: [],
  siblings: [],
};
for (let k = 0; k < K; k++) {
  // Challenge k lies in segment k: its top logK bits are k, its low L bits random.
  input.challenge.push(((BigInt(k) << BigInt(L)) | bits(L)).toString());
  input.parents.push(Array.from({ length: parents }, fe));
  input.data.push(fe());
  input.siblings.push(Array.from({ length: L }, fe));
}
writeFileSync(opts.out, JSON.stringify(input) + "\n");
