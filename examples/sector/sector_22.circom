pragma circom 2.0.0;
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(5, 30, 5);
