pragma circom 2.0.0;

// y = x^(n+1) through n multiplications: exactly n constraints after --O2 (the output is merged
// into the last product), one public output, so the domain holds n + 1 + 1 rows. Picking n sets the
// domain size exactly; with x = 0 every wire except the constant one is zero.
template Chain(n) {
    signal input x;
    signal output y;
    signal m[n];
    m[0] <== x * x;
    for (var i = 1; i < n; i++) {
        m[i] <== m[i - 1] * x;
    }
    y <== m[n - 1];
}
