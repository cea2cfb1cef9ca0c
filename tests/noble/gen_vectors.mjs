// Generates test vectors with @noble/curves (an independent, audited implementation) for
// tests/noble_test.cpp. BLS12-381: field arithmetic in Fq, Fr, Fq2 and Fq12, G1/G2 scalar
// multiplication and addition, compressed encodings (valid and corrupted), and pairings. BN254 (under
// "bn254"): Fq, Fr, Fq2, the generators, G1/G2 scalar multiplication and addition.
//
// usage: node tests/noble/gen_vectors.mjs OUT.json [SEED]
// Every random value derives from SEED (hex or any string; fresh randomness when omitted), which is
// written into the output so that a failing run can be reproduced.
//
// Encoding of the output: every field element is a decimal string; Fq2 is [c0, c1]; Fq12 is
// [[c0.c0, c0.c1, c0.c2], [c1.c0, c1.c1, c1.c2]] of Fq2 (snarkjs's layout, which is also noble's
// tower: Fq6 = Fq2[v]/(v^3 - (1+u)), Fq12 = Fq6[w]/(w^2 - v)); a point is [x, y] or null for infinity;
// bytes are lowercase hex.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { bls12_381 as bls } from '@noble/curves/bls12-381.js';
import { bn254 } from '@noble/curves/bn254.js';

const [outPath, seedArg] = process.argv.slice(2);
if (!outPath) {
  console.error('usage: node gen_vectors.mjs OUT.json [SEED]');
  process.exit(2);
}
const seed = seedArg ?? randomBytes(16).toString('hex');

const { Fp, Fr, Fp2, Fp6, Fp12 } = bls.fields;
const G1 = bls.G1.Point;
const G2 = bls.G2.Point;
const q = Fp.ORDER;
const r = Fr.ORDER;

// Deterministic byte stream: SHA-256(seed || counter).
let counter = 0;
function randBig(bits) {
  let acc = 0n;
  let have = 0;
  while (have < bits + 64) {
    const h = createHash('sha256').update(`${seed}/${counter++}`).digest('hex');
    acc = (acc << 256n) | BigInt('0x' + h);
    have += 256;
  }
  return acc;
}
const randFq = () => randBig(381) % q;
const randFr = () => randBig(255) % r;
const randScalarBls = () => 1n + (randBig(255) % (r - 1n)); // in [1, r-1], what noble's multiply accepts
const randScalar = randScalarBls;
// The same for BN254's fields.
const bnq = bn254.fields.Fp.ORDER, bnr = bn254.fields.Fr.ORDER;
const randBnFq = () => randBig(254) % bnq;
const randBnFr = () => randBig(254) % bnr;
const randBnScalar = () => 1n + (randBig(254) % (bnr - 1n));

const dec = (x) => x.toString();
const fq2 = (x) => [dec(x.c0), dec(x.c1)];
const mkFq2 = (c0, c1) => Fp2.create({ c0, c1 });
const randFq2 = () => mkFq2(randFq(), randFq());
const g1pt = (P) => (P.is0() ? null : [dec(P.toAffine().x), dec(P.toAffine().y)]);
const g2pt = (P) => (P.is0() ? null : [fq2(P.toAffine().x), fq2(P.toAffine().y)]);
const fq6 = (x) => [fq2(x.c0), fq2(x.c1), fq2(x.c2)];
const fq12 = (x) => [fq6(x.c0), fq6(x.c1)];
// A random Fq12 of a curve's tower, from a random base-field element generator.
const randFq12Of = (fields, randBase) => {
  const r2 = () => fields.Fp2.create({ c0: randBase(), c1: randBase() });
  const r6 = () => fields.Fp6.create({ c0: r2(), c1: r2(), c2: r2() });
  return fields.Fp12.create({ c0: r6(), c1: r6() });
};
const hex = (b) => Buffer.from(b).toString('hex');
// k*P for any k in [0, r), including 0 which noble's safe multiply rejects.
const mul = (P, k) => (k === 0n ? P.multiplyUnsafe(0n) : P.multiply(k));
const trySqrt = (F, a) => {
  try {
    return F.sqrt(a);
  } catch {
    return undefined;
  }
};

// Prime-field cases: edge values 0, 1, 2, p-1, p-2, (p-1)/2, (p+1)/2 against each other and randoms.
function primeFieldCases(F, rand) {
  const p = F.ORDER;
  const edges = [0n, 1n, 2n, p - 1n, p - 2n, (p - 1n) / 2n, (p + 1n) / 2n];
  const pairs = [];
  for (const a of edges) pairs.push([a, rand()], [rand(), a]);
  for (let i = 0; i < edges.length; i++) pairs.push([edges[i], edges[(i + 3) % edges.length]]);
  for (let i = 0; i < 24; i++) pairs.push([rand(), rand()]);
  for (let i = 0; i < 8; i++) {
    const s = rand();
    pairs.push([F.sqr(s), rand()]); // guaranteed squares for sqrt
  }
  return pairs.map(([a, b]) => {
    const s = trySqrt(F, a);
    return {
      a: dec(a),
      b: dec(b),
      add: dec(F.add(a, b)),
      sub: dec(F.sub(a, b)),
      mul: dec(F.mul(a, b)),
      sqr: dec(F.sqr(a)),
      inv: F.is0(a) ? null : dec(F.inv(a)),
      sqrt: s === undefined ? null : dec(s),
    };
  });
}

// Fq2 over a base field of order p.
function fq2Cases(Fp2, p, randFq) {
  const mkFq2 = (c0, c1) => Fp2.create({ c0, c1 });
  const randFq2 = () => mkFq2(randFq(), randFq());
  const zero = Fp2.ZERO, one = Fp2.ONE;
  const edges = [zero, one, Fp2.neg(one), mkFq2(0n, 1n), mkFq2(p - 1n, p - 1n), mkFq2(1n, 1n), mkFq2(randFq(), 0n),
    mkFq2(0n, randFq())];
  const pairs = [];
  for (const a of edges) pairs.push([a, randFq2()]);
  for (let i = 0; i < 16; i++) pairs.push([randFq2(), randFq2()]);
  for (let i = 0; i < 8; i++) pairs.push([Fp2.sqr(randFq2()), randFq2()]);
  return pairs.map(([a, b]) => {
    const s = trySqrt(Fp2, a);
    return {
      a: fq2(a),
      b: fq2(b),
      add: fq2(Fp2.add(a, b)),
      sub: fq2(Fp2.sub(a, b)),
      mul: fq2(Fp2.mul(a, b)),
      sqr: fq2(Fp2.sqr(a)),
      inv: Fp2.is0(a) ? null : fq2(Fp2.inv(a)),
      sqrt: s === undefined ? null : fq2(s),
    };
  });
}

function fq12Cases(fields = bls.fields, randBase = randFq) {
  const Fp12 = fields.Fp12;
  const randFq12 = () => randFq12Of(fields, randBase);
  const out = [];
  for (let i = 0; i < 4; i++) {
    const a = randFq12(), b = randFq12();
    out.push({
      a: fq12(a),
      b: fq12(b),
      mul: fq12(Fp12.mul(a, b)),
      sqr: fq12(Fp12.sqr(a)),
      inv: fq12(Fp12.inv(a)),
      frobenius: fq12(Fp12.frobeniusMap(a, 1)),
      frobenius2: fq12(Fp12.frobeniusMap(a, 2)),
      final_exponentiation: fq12(Fp12.finalExponentiate(a)),
    });
  }
  return out;
}

// Scalar multiplication and addition on a group G of order r; with encodings, the compressed forms
// (BLS12-381's zcash encoding).
function curveCases(G, pt, r = bls.fields.Fr.ORDER, randScalar = randScalarBls, encodings = true) {
  const scalars = [0n, 1n, 2n, 3n, r - 1n, r - 2n, (r - 1n) / 2n];
  for (let i = 0; i < 10; i++) scalars.push(randScalar());
  const bases = [G.BASE, G.BASE.multiply(randScalar()), G.BASE.multiply(randScalar())];
  const muls = [];
  bases.forEach((B, bi) =>
    scalars.forEach((k, ki) => {
      if (bi > 0 && ki % 2) return; // fewer cases on the random bases
      muls.push({ base: pt(B), k: dec(k), result: pt(mul(B, k)) });
    })
  );
  const adds = [];
  const P = G.BASE.multiply(randScalar()), Q = G.BASE.multiply(randScalar());
  const addPairs = [
    [P, Q], [P, P], [P, P.negate()], [P, G.ZERO], [G.ZERO, Q], [G.ZERO, G.ZERO], [G.BASE, G.BASE],
    [P, Q.negate()], [P.double(), P],
  ];
  for (const [a, b] of addPairs) adds.push({ p: pt(a), q: pt(b), sum: pt(a.add(b)) });
  if (!encodings) return { mul: muls, add: adds };
  // Compressed encodings, with both signs of y, and corrupted encodings with noble's verdict.
  const enc = [];
  const encPoints = [G.ZERO, G.BASE, G.BASE.negate(), P, P.negate(), Q, Q.negate()];
  for (let i = 0; i < 6; i++) encPoints.push(G.BASE.multiply(randScalar()));
  for (const E of encPoints) enc.push({ point: pt(E), hex: hex(E.toBytes(true)) });
  const decodes = [];
  for (const E of encPoints) {
    const good = E.toBytes(true);
    decodes.push({ hex: hex(good), valid: true });
    for (let t = 0; t < 3; t++) {
      const bad = Uint8Array.from(good);
      // Flip a random bit outside the top (flag/high) byte so x stays below q.
      const pos = 1 + Number(randBig(16) % BigInt(bad.length - 1));
      bad[pos] ^= 1 << Number(randBig(8) % 8n);
      let valid = true;
      try {
        G.fromBytes(bad);
      } catch {
        valid = false;
      }
      decodes.push({ hex: hex(bad), valid });
    }
    const noFlag = Uint8Array.from(good);
    noFlag[0] &= 0x7f; // uncompressed flag on a compressed-length input
    decodes.push({ hex: hex(noFlag), valid: false });
  }
  return { mul: muls, add: adds, compressed: enc, decode: decodes };
}

// e(aG1, bG2) at fixed and random a, b (each checked for bilinearity by noble first), and a product
// of two pairings that is one.
function pairingCases(curve = bls, randScalar = randScalarBls) {
  const { Fr, Fp12 } = curve.fields;
  const G1 = curve.G1.Point, G2 = curve.G2.Point;
  const r = Fr.ORDER;
  const base = curve.pairing(G1.BASE, G2.BASE);
  const out = [];
  const pairs = [[1n, 1n], [2n, 3n], [r - 1n, 1n]];
  for (let i = 0; i < 4; i++) pairs.push([randScalar(), randScalar()]);
  for (const [a, b] of pairs) {
    const P = G1.BASE.multiply(a), Q = G2.BASE.multiply(b);
    const e = curve.pairing(P, Q);
    const ab = Fr.mul(a, b);
    const bilinear = Fp12.eql(e, Fp12.pow(base, ab));
    if (!bilinear) throw new Error('noble pairing is not bilinear?');
    out.push({ a: dec(a), b: dec(b), p: g1pt(P), q: g2pt(Q), e: fq12(e) });
  }
  // A product that is one: e(aP, bQ) e(-ab P, Q) = 1, checked by noble's batch pairing.
  const a = randScalar(), b = randScalar();
  const ps = [G1.BASE.multiply(a), G1.BASE.multiply(Fr.mul(a, b)).negate()];
  const qs = [G2.BASE.multiply(b), G2.BASE];
  const prod = curve.pairingBatch(ps.map((g1, i) => ({ g1, g2: qs[i] })));
  if (!Fp12.eql(prod, Fp12.ONE)) throw new Error('noble product is not one?');
  return { cases: out, product_one: { ps: ps.map(g1pt), qs: qs.map(g2pt) } };
}

const vectors = {
  generator: '@noble/curves bls12-381',
  seed,
  fq: primeFieldCases(Fp, randFq),
  fr: primeFieldCases(Fr, randFr),
  fq2: fq2Cases(Fp2, q, randFq),
  fq12: fq12Cases(),
  g1: curveCases(G1, g1pt),
  g2: curveCases(G2, g2pt),
  pairing: pairingCases(),
  bn254: {
    fq: primeFieldCases(bn254.fields.Fp, randBnFq),
    fr: primeFieldCases(bn254.fields.Fr, randBnFr),
    fq2: fq2Cases(bn254.fields.Fp2, bnq, randBnFq),
    generators: { g1: g1pt(bn254.G1.Point.BASE), g2: g2pt(bn254.G2.Point.BASE) },
    g1: curveCases(bn254.G1.Point, g1pt, bnr, randBnScalar, false),
    g2: curveCases(bn254.G2.Point, g2pt, bnr, randBnScalar, false),
    fq12: fq12Cases(bn254.fields, randBnFq),
    pairing: pairingCases(bn254, randBnScalar),
  },
};
writeFileSync(outPath, JSON.stringify(vectors, null, 1));
console.log(`wrote ${outPath} (seed ${seed})`);
