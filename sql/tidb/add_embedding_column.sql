-- {vector_type} is VECTOR(D) on TiDB (D from the bound model) and LONGTEXT on MariaDB,
-- where the vector's '[...]' text is read as JSON by the VEC_COSINE_DISTANCE stand-in.
ALTER TABLE {chunks} ADD COLUMN IF NOT EXISTS embedding {vector_type};
