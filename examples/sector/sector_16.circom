pragma circom 2.0.0;
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(0, 24, 1);
