-- An HNSW index lives on TiFlash; ADD VECTOR INDEX needs the replica first. Fails with
-- "tiflash replica count ... total tiflash server count: 0" when there is no TiFlash.
ALTER TABLE {chunks} SET TIFLASH REPLICA 1;
