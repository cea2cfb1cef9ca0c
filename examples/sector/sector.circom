pragma circom 2.0.0;

// A storage-sector proof in the shape of a proof-of-replication: K challenged nodes of one sector,
// each with a SHA-256 label and a Poseidon Merkle inclusion path to the sector's replica commitment.
//
// The sector is a binary Merkle tree of depth D over 2^D nodes. It is split into K = 2^logK equal
// segments and challenge k lands in segment k (a stratified challenge: the top logK bits of its
// index are k). For each challenge the circuit
//   1. checks the index's bits: challenge[k] < 2^D and its top logK bits equal k;
//   2. computes the node's label, SHA-256 over
//        replicaId (32 bytes) || index (8 bytes, big-endian) || 24 zero bytes || P parent labels (32 bytes each)
//      where every 32-byte field element is big-endian, and keeps the low 254 bits of the digest (read
//      as a big-endian number) as a field element;
//   3. encodes the node, replica = label + data (data is the node's unsealed value), and hashes the
//      replica up the tree with Poseidon(2), D - logK levels with sibling values from the input, the
//      left/right order at each level taken from the index's bits.
// The K segment roots are then hashed pairwise (logK more levels) into commR, the circuit's output.
// Because commR is an output, every assignment of the private values is a valid input: the input
// generator needs neither SHA-256 nor Poseidon.
//
// Public: replicaId, challenge[K] (inputs), commR (output).
// Private: parents[K][P] and each parent below 2^254, data[K], siblings[K][D - logK].
// Size: SHA-256 dominates. A label hashes 512 + 256 P bits, padded to floor((576 + 256 P) / 512) + 1
// blocks of about 30k constraints each; a Merkle level costs 241 constraints and each 254-bit
// decomposition 254. README.md lists the measured sizes.

include "circomlib/circuits/sha256/sha256.circom";
include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";

// The 256-bit big-endian string of a field element below 2^254 (the top two bits are zero).
template FieldToBits256() {
    signal input in;
    signal output out[256];
    component n2b = Num2Bits(254);
    n2b.in <== in;
    out[0] <== 0;
    out[1] <== 0;
    for (var i = 0; i < 254; i++) out[2 + i] <== n2b.out[253 - i];
}

// A node's label: SHA-256(replicaId || index || zeros || parents), low 254 bits of the digest.
// idx holds the index's bits, least significant first.
template NodeLabel(D, P) {
    signal input replicaBits[256];
    signal input idx[D];
    signal input parents[P];
    signal output label;

    var nBits = 512 + 256 * P;
    component sha = Sha256(nBits);
    for (var i = 0; i < 256; i++) sha.in[i] <== replicaBits[i];
    // The index as a 64-bit big-endian word, then 192 zero bits: the rest of the first block.
    for (var i = 0; i < 64; i++) {
        if (63 - i < D) {
            sha.in[256 + i] <== idx[63 - i];
        } else {
            sha.in[256 + i] <== 0;
        }
    }
    for (var i = 320; i < 512; i++) sha.in[i] <== 0;

    component pb[P];
    for (var j = 0; j < P; j++) {
        pb[j] = FieldToBits256();
        pb[j].in <== parents[j];
        for (var i = 0; i < 256; i++) sha.in[512 + 256 * j + i] <== pb[j].out[i];
    }

    // sha.out is the digest's bit string, most significant bit first.
    var acc = 0;
    var e = 1;
    for (var i = 0; i < 254; i++) {
        acc += sha.out[255 - i] * e;
        e = e + e;
    }
    label <== acc;
}

// One Merkle level: hashes cur with its sibling, cur on the left when bit is 0, on the right when 1.
template MerkleStep() {
    signal input cur;
    signal input sibling;
    signal input bit;
    signal output out;
    signal left;
    left <== cur + bit * (sibling - cur);
    component h = Poseidon(2);
    h.inputs[0] <== left;
    h.inputs[1] <== cur + sibling - left;
    out <== h.out;
}

template SectorProof(logK, D, P) {
    var K = 1 << logK;
    var L = D - logK;  // levels proved per challenge; the top logK levels are computed in the circuit
    assert(logK >= 0 && logK <= 10);
    assert(L >= 1 && D <= 64);
    assert(P >= 1);

    signal input replicaId;
    signal input challenge[K];
    signal input parents[K][P];
    signal input data[K];
    signal input siblings[K][L];
    signal output commR;

    component replica = FieldToBits256();
    replica.in <== replicaId;

    component idx[K];
    component label[K];
    component step[K][L];
    signal node[K];
    signal segRoot[K];
    for (var k = 0; k < K; k++) {
        // 1. The index: D bits, the top logK of them equal to k.
        idx[k] = Num2Bits(D);
        idx[k].in <== challenge[k];
        for (var j = 0; j < logK; j++) idx[k].out[L + j] === (k >> j) & 1;

        // 2. The label.
        label[k] = NodeLabel(D, P);
        for (var i = 0; i < 256; i++) label[k].replicaBits[i] <== replica.out[i];
        for (var i = 0; i < D; i++) label[k].idx[i] <== idx[k].out[i];
        for (var j = 0; j < P; j++) label[k].parents[j] <== parents[k][j];

        // 3. The encoded node and its path to the segment root.
        node[k] <== label[k].label + data[k];
        for (var l = 0; l < L; l++) {
            step[k][l] = MerkleStep();
            if (l == 0) {
                step[k][l].cur <== node[k];
            } else {
                step[k][l].cur <== step[k][l - 1].out;
            }
            step[k][l].sibling <== siblings[k][l];
            step[k][l].bit <== idx[k].out[l];
        }
        segRoot[k] <== step[k][L - 1].out;
    }

    // The top of the tree over the K segment roots, heap order: node i (1 <= i < 2K) is tree[i - 1],
    // nodes K .. 2K-1 are the segment roots and node i < K hashes nodes 2i and 2i+1. Node 1 is commR.
    signal tree[2 * K - 1];
    for (var k = 0; k < K; k++) tree[K + k - 1] <== segRoot[k];
    component top[K];  // nodes 1 .. K-1; top[0] stays unused
    for (var i = K - 1; i >= 1; i--) {
        top[i] = Poseidon(2);
        top[i].inputs[0] <== tree[2 * i - 1];
        top[i].inputs[1] <== tree[2 * i];
        tree[i - 1] <== top[i].out;
    }
    commR <== tree[0];
}
