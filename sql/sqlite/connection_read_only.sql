-- Reader connections never write, whatever a caller does with them.
PRAGMA query_only = 1;
