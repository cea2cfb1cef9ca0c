pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/mux1.circom";

// A depth-3 Merkle inclusion proof with circomlib's Poseidon(2): a realistic mix of linear and
// non-linear constraints from a widely used library. Public: root (input) and the leaf's hash.
template PoseidonMerkle(depth) {
    signal input root;
    signal input leaf;
    signal input pathElements[depth];
    signal input pathIndices[depth];
    signal output leafHash;

    component lh = Poseidon(1);
    lh.inputs[0] <== leaf;
    leafHash <== lh.out;

    component h[depth];
    component mux[depth];
    signal cur[depth + 1];
    cur[0] <== leafHash;
    for (var i = 0; i < depth; i++) {
        pathIndices[i] * (1 - pathIndices[i]) === 0;
        mux[i] = MultiMux1(2);
        mux[i].c[0][0] <== cur[i];
        mux[i].c[0][1] <== pathElements[i];
        mux[i].c[1][0] <== pathElements[i];
        mux[i].c[1][1] <== cur[i];
        mux[i].s <== pathIndices[i];
        h[i] = Poseidon(2);
        h[i].inputs[0] <== mux[i].out[0];
        h[i].inputs[1] <== mux[i].out[1];
        cur[i + 1] <== h[i].out;
    }
    root === cur[depth];
}

component main {public [root]} = PoseidonMerkle(3);
