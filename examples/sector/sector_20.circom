pragma circom 2.0.0;
// 2^20 domain: 8 challenges, a depth-30 tree, 5 parents per label (4 SHA-256 blocks each): 1,022,782 constraints.
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(3, 30, 5);
