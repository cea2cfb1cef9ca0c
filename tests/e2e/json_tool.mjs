// JSON checks and tampering for the end-to-end tests (snarkjs proof.json / public.json / vk.json).
//   equal <a.json> <b.json>                       deep equality, key order ignored
//   public-matches-witness <wtns.json> <vk.json> <public.json>
//                                                 public.json == witness wires 1..nPublic
//   check-proof <proof.json>                      snarkjs shape, canonical decimals, affine z = 1
//   tamper <mode> <in.json> <out.json>            write a corrupted copy (modes below)
import { readFileSync, writeFileSync } from "node:fs";

// The curve of the files (E2E_CURVE, snarkjs's name): its base field modulus q and scalar field
// modulus r.
const CURVES = {
  bls12381: {
    Q: 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaabn,
    R: 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n,
  },
  bn128: {
    Q: 21888242871839275222246405745257275088696311157297823662689037894645226208583n,
    R: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
  },
};
const CURVE = process.env.E2E_CURVE || "bls12381";
if (!CURVES[CURVE]) {
  console.error(`json_tool: unknown E2E_CURVE ${CURVE}`);
  process.exit(1);
}
const { Q, R } = CURVES[CURVE];

const read = (p) => JSON.parse(readFileSync(p, "utf8"));
const fail = (msg) => { console.error(`json_tool: ${msg}`); process.exit(1); };

// Returns the path of the first difference between two JSON values, or null.
function firstDiff(a, b, path = "$") {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
    return `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  }
  if (Array.isArray(a)) {
    if (a.length !== b.length) return `${path}: length ${a.length} vs ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDiff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (a !== null && typeof a === "object") {
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
    const missing = ka.filter((k) => !(k in b)).concat(kb.filter((k) => !(k in a)));
    if (missing.length) return `${path}: keys only on one side: ${missing.join(", ")}`;
    for (const k of ka) {
      const d = firstDiff(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

// A canonical decimal below the modulus: what snarkjs writes and what every reader must accept.
function checkDecimal(s, mod, what) {
  if (typeof s !== "string" || !/^(0|[1-9][0-9]*)$/.test(s)) fail(`${what}: not a canonical decimal string: ${JSON.stringify(s)}`);
  if (BigInt(s) >= mod) fail(`${what}: ${s} is not below the modulus`);
}

function checkProof(p) {
  if (p.protocol !== "groth16") fail(`protocol is ${JSON.stringify(p.protocol)}, want "groth16"`);
  if (p.curve !== CURVE) fail(`curve is ${JSON.stringify(p.curve)}, want ${JSON.stringify(CURVE)}`);
  for (const k of ["pi_a", "pi_c"]) {
    if (!Array.isArray(p[k]) || p[k].length !== 3) fail(`${k} must be [x, y, z]`);
    p[k].forEach((v, i) => checkDecimal(v, Q, `${k}[${i}]`));
    if (p[k][2] !== "1") fail(`${k} is not affine (z = ${p[k][2]})`);
  }
  if (!Array.isArray(p.pi_b) || p.pi_b.length !== 3 || !p.pi_b.every((c) => Array.isArray(c) && c.length === 2)) {
    fail("pi_b must be [[x0, x1], [y0, y1], [z0, z1]]");
  }
  p.pi_b.forEach((c, i) => c.forEach((v, j) => checkDecimal(v, Q, `pi_b[${i}][${j}]`)));
  if (p.pi_b[2][0] !== "1" || p.pi_b[2][1] !== "0") fail("pi_b is not affine");
}

// Corruptions that a verifier must reject. Each keeps the file well-formed JSON.
const tampers = {
  // Another valid curve point in place of pi_a (pi_a negated: y -> q - y).
  "negate-a": (p) => { p.pi_a[1] = (Q - BigInt(p.pi_a[1])).toString(); return p; },
  // pi_a and pi_c swapped: both stay valid G1 points.
  "swap-ac": (p) => { [p.pi_a, p.pi_c] = [p.pi_c, p.pi_a]; return p; },
  // One decimal digit of pi_a.x changed: almost surely off the curve.
  "digit-a": (p) => {
    const s = p.pi_a[0];
    const last = s[s.length - 1];
    p.pi_a[0] = s.slice(0, -1) + (last === "9" ? "8" : String(Number(last) + 1));
    return p;
  },
  // pi_b's two coordinates of x exchanged (c0 <-> c1): a G2 encoding mix-up.
  "swap-b-x": (p) => { p.pi_b[0] = [p.pi_b[0][1], p.pi_b[0][0]]; return p; },
  // The last public value plus one (mod r): a different, valid statement.
  "public-plus-one": (pub) => { const i = pub.length - 1; pub[i] = ((BigInt(pub[i]) + 1n) % R).toString(); return pub; },
  // The last public value plus r: the same residue, but not canonical; snarkjs rejects values >= r.
  "public-plus-r": (pub) => { const i = pub.length - 1; pub[i] = (BigInt(pub[i]) + R).toString(); return pub; },
  // One public value dropped.
  "public-drop": (pub) => pub.slice(0, -1),
  // One extra public value.
  "public-extra": (pub) => pub.concat(["1"]),
};

const [cmd, ...args] = process.argv.slice(2);
switch (cmd) {
  case "equal": {
    const d = firstDiff(read(args[0]), read(args[1]));
    if (d) fail(`${args[0]} and ${args[1]} differ at ${d}`);
    break;
  }
  case "public-matches-witness": {
    const w = read(args[0]), vk = read(args[1]), pub = read(args[2]);
    const n = Number(vk.nPublic);
    if (!Array.isArray(pub) || pub.length !== n) fail(`public.json has ${pub.length} values, the key has nPublic = ${n}`);
    pub.forEach((v, i) => checkDecimal(v, R, `public[${i}]`));
    const d = firstDiff(pub, w.slice(1, 1 + n));
    if (d) fail(`public.json is not witness wires 1..${n}: ${d}`);
    break;
  }
  case "check-proof":
    checkProof(read(args[0]));
    break;
  case "tamper": {
    const f = tampers[args[0]];
    if (!f) fail(`unknown tamper mode ${args[0]} (known: ${Object.keys(tampers).join(", ")})`);
    writeFileSync(args[2], JSON.stringify(f(read(args[1])), null, 1));
    break;
  }
  default:
    fail(`unknown command ${cmd}`);
}
