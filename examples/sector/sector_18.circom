pragma circom 2.0.0;
// 2^18 domain: 4 challenges, a depth-20 tree, 1 parent per label (2 SHA-256 blocks each): 255,938 constraints.
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(2, 20, 1);
