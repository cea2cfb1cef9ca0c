pragma circom 2.0.0;
// 2^21 domain, the largest size circom2 compiled on this 24 GB machine (3.62 GiB of its 4 GiB): 4 challenges,
// a depth-30 tree (a 32 GiB sector's 2^30 nodes), 14 parents per label as in a PoRep label (9 SHA-256
// blocks each): 1,126,254 constraints.
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(2, 30, 14);
