"""The index store: the contract every backend honours (`contract`), the BM25 analyzer and
search filters both backends share, and the backends (`sqlite/`, `tidb/`); `open` picks one."""
