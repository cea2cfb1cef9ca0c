pragma circom 2.0.0;

// Every operation of circom's runtime on values that depend on the inputs, and control flow that
// depends on them: the compiled witness program must reproduce circom's witness on the path it was
// traced on, and refuse (for the native generator) any input that takes another path.
//   x, y: any field elements; k: a small shift amount and loop bound (0 <= k < 16, asserted).

// 1 / in where in is nonzero, else 0: a branch on a signal (circomlib's IsZero).
template IsZero() {
    signal input in;
    signal output out;
    signal inv;
    inv <-- in != 0 ? 1 / in : 0;
    out <== -in * inv + 1;
    in * out === 0;
}

template WitnessOps() {
    signal input x;
    signal input y;
    signal input k;
    signal output f[6];   // field operations
    signal output i[4];   // integer division, remainder and circom's signed view
    signal output b[6];   // bitwise operations and shifts
    signal output c[9];   // comparisons and logic
    signal output flow[4];  // control flow on input values
    signal output z;

    assert(k < 16);
    f[0] <-- x + y;
    f[1] <-- x - y;
    f[2] <-- x * y;
    f[3] <-- -x;
    f[4] <-- x / (y + 1);
    f[5] <-- x ** 5;

    i[0] <-- x \ (k + 1);
    i[1] <-- x % (k + 1);
    i[2] <-- y \ 7;
    i[3] <-- (x * y) % 1000003;

    b[0] <-- x & y;
    b[1] <-- x | y;
    b[2] <-- x ^ y;
    b[3] <-- ~x;
    b[4] <-- x << k;
    b[5] <-- (x >> k) & 1;

    c[0] <-- x < y;
    c[1] <-- x > y;
    c[2] <-- x <= y;
    c[3] <-- x >= y;
    c[4] <-- x == y;
    c[5] <-- x != y;
    c[6] <-- x && y;
    c[7] <-- x || k;
    c[8] <-- !x;

    // A branch, a loop bound and an array index, each taken from an input.
    var m = 0;
    if (x > y) {
        m = x * 2;
    } else {
        m = y * 3 + 1;
    }
    flow[0] <-- m;
    var s = 0;
    for (var j = 0; j < k; j++) {
        s = s + x * j;
    }
    flow[1] <-- s;
    var table[4] = [11, 22, 33, 44];
    flow[2] <-- table[k % 4];
    flow[3] <-- x > y ? x : y;

    component isz = IsZero();
    isz.in <== x;
    z <== isz.out;
}

component main = WitnessOps();
