pragma circom 2.0.0;
include "sector.circom";
component main {public [replicaId, challenge]} = SectorProof(3, 30, 5);
