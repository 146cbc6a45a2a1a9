-- TiDB answers e.g. '8.0.11-TiDB-v8.5.1', MariaDB '10.11.18-MariaDB-0+deb12u1'.
SELECT VERSION();
