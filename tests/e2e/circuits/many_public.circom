pragma circom 2.0.0;

// 56 public signals (16 outputs, then 40 public inputs): exercises a long IC and public.json,
// including the extreme values 0 and r-1 among the public inputs.
template ManyPublic(nIn, nOut) {
    signal input x[nIn];
    signal input k;
    signal output y[nOut];
    signal sq[nIn];
    for (var i = 0; i < nIn; i++) {
        sq[i] <== x[i] * x[i];
    }
    // Output j is k times the sum of the squares of the inputs i with i % nOut == j.
    for (var j = 0; j < nOut; j++) {
        var acc = 0;
        for (var i = j; i < nIn; i += nOut) {
            acc += sq[i];
        }
        y[j] <== acc * k;
    }
}

component main {public [x]} = ManyPublic(40, 16);
