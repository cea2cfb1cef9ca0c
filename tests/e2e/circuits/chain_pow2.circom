pragma circom 2.0.0;

include "lib/chain.circom";

// 254 constraints + 1 public + 1 = 256 = 2^8: the domain is exactly full.
component main = Chain(254);
