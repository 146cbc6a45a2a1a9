"""The scale-out store: named indexes as table sets in one TiDB database."""
