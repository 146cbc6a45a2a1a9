# shellcheck shell=bash
# A private MariaDB standing in for TiDB in the tests (issue 5). Sourced by .ci/run, or by hand:
#
#   source .ci/mariadb.sh && start_private_mariadb   # exports RAG_TEST_MYSQL_DSN
#   .venv/bin/python -m pytest -q tests/core/test_tidb_*.py
#   stop_private_mariadb
#
# It never touches the system service: its own data directory (.mariadb/, git-ignored), its own
# socket and pid file, a loopback TCP port, and a throwaway user that owns one database.

RAG_MARIADB_DIR="${RAG_MARIADB_DIR:-$PWD/.mariadb}"
RAG_MARIADB_PORT="${RAG_MARIADB_PORT:-33306}"
RAG_MARIADB_DB="${RAG_MARIADB_DB:-rag_test}"
RAG_MARIADB_USER="${RAG_MARIADB_USER:-rag}"
RAG_MARIADB_PASSWORD="${RAG_MARIADB_PASSWORD:-rag-test-pw}"

_mariadb_bin() {
    # Debian puts mariadbd in /usr/sbin, which is not on every PATH.
    local name="$1"
    command -v "$name" 2>/dev/null || { [ -x "/usr/sbin/$name" ] && echo "/usr/sbin/$name"; } \
        || { [ -x "/usr/bin/$name" ] && echo "/usr/bin/$name"; } || true
}

_mariadb_client() {
    "$(_mariadb_bin mariadb)" --no-defaults --protocol=socket \
        --socket="$RAG_MARIADB_DIR/mariadbd.sock" -uroot "$@"
}

start_private_mariadb() {
    local mariadbd install_db owner
    mariadbd="$(_mariadb_bin mariadbd)"
    install_db="$(_mariadb_bin mariadb-install-db)"
    if [ -z "$mariadbd" ] || [ -z "$install_db" ]; then
        echo "mariadb.sh: mariadbd not found; apt-get install -y mariadb-server" >&2
        return 1
    fi
    mkdir -p "$RAG_MARIADB_DIR"
    # mariadbd refuses to run as root unless told which user to be; as root we keep root
    # (the directory is private to this checkout), otherwise the invoking user.
    owner="$(id -un)"
    if [ ! -d "$RAG_MARIADB_DIR/data/mysql" ]; then
        "$install_db" --no-defaults --user="$owner" --datadir="$RAG_MARIADB_DIR/data" \
            --auth-root-authentication-method=socket --skip-test-db \
            >"$RAG_MARIADB_DIR/install.log" 2>&1 || {
            cat "$RAG_MARIADB_DIR/install.log" >&2
            return 1
        }
    fi
    if [ -f "$RAG_MARIADB_DIR/mariadbd.pid" ] && kill -0 "$(cat "$RAG_MARIADB_DIR/mariadbd.pid")" 2>/dev/null; then
        echo "mariadb.sh: reusing the private mariadbd already running on port $RAG_MARIADB_PORT" >&2
    else
        # --local-infile: the loader's LOAD DATA LOCAL INFILE path is measured against it.
        "$mariadbd" --no-defaults --user="$owner" \
            --datadir="$RAG_MARIADB_DIR/data" \
            --socket="$RAG_MARIADB_DIR/mariadbd.sock" \
            --pid-file="$RAG_MARIADB_DIR/mariadbd.pid" \
            --log-error="$RAG_MARIADB_DIR/error.log" \
            --bind-address=127.0.0.1 --port="$RAG_MARIADB_PORT" \
            --skip-name-resolve --local-infile=1 \
            --character-set-server=utf8mb4 --collation-server=utf8mb4_bin \
            --innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=2 \
            --max-allowed-packet=64M \
            >/dev/null 2>&1 &
        local tries=0
        until _mariadb_client -e "SELECT 1" >/dev/null 2>&1; do
            tries=$((tries + 1))
            if [ "$tries" -gt 60 ]; then
                echo "mariadb.sh: mariadbd did not answer within 30 s; see $RAG_MARIADB_DIR/error.log" >&2
                tail -20 "$RAG_MARIADB_DIR/error.log" >&2 || true
                return 1
            fi
            sleep 0.5
        done
    fi
    _mariadb_client <<SQL
CREATE DATABASE IF NOT EXISTS \`$RAG_MARIADB_DB\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE USER IF NOT EXISTS '$RAG_MARIADB_USER'@'127.0.0.1' IDENTIFIED BY '$RAG_MARIADB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$RAG_MARIADB_DB\`.* TO '$RAG_MARIADB_USER'@'127.0.0.1';
-- The store's VEC_COSINE_DISTANCE stand-in is a stored function; without binary logging
-- this is the only switch a non-SUPER user needs to create it.
SET GLOBAL log_bin_trust_function_creators = 1;
SQL
    export RAG_TEST_MYSQL_DSN="tidb://$RAG_MARIADB_USER:$RAG_MARIADB_PASSWORD@127.0.0.1:$RAG_MARIADB_PORT/$RAG_MARIADB_DB"
    echo "mariadb.sh: private mariadbd on 127.0.0.1:$RAG_MARIADB_PORT (RAG_TEST_MYSQL_DSN exported)" >&2
}

stop_private_mariadb() {
    local pid
    [ -f "$RAG_MARIADB_DIR/mariadbd.pid" ] || return 0
    pid="$(cat "$RAG_MARIADB_DIR/mariadbd.pid")"
    kill "$pid" 2>/dev/null || return 0
    local tries=0
    while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 60 ]; do
        tries=$((tries + 1))
        sleep 0.5
    done
}
