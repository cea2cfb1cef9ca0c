pragma circom 2.0.0;
// 2^16 domain: 1 challenge, a depth-24 tree, 1 parent per label (2 SHA-256 blocks): 65,465 constraints.
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(0, 24, 1);
