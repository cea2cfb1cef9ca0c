pragma circom 2.0.0;
// 2^21 domain: 16 challenges, a depth-30 tree, 5 parents per label (4 SHA-256 blocks each), about 2.05 M
// constraints. circom2 (32-bit WebAssembly) runs out of its 4 GiB compiling it: it needs a native circom.
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(4, 30, 5);
