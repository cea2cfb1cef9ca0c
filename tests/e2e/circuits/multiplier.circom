pragma circom 2.0.0;

// The smallest useful circuit: one constraint, one private pair, one public output.
template Multiplier() {
    signal input a;
    signal input b;
    signal output c;
    c <== a * b;
}

component main = Multiplier();
