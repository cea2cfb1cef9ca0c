pragma circom 2.0.0;
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(2, 20, 1);
