pragma circom 2.0.0;

include "lib/chain.circom";

// 255 constraints + 1 public + 1 = 257: one row past 2^8, so the domain doubles to 512.
component main = Chain(255);
