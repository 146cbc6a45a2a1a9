# Two commands set everything up on a fresh clone: `make run` and `make test`.
# PYTHON names the interpreter for .venv; by default scripts/make_venv.sh takes the first
# Python >= 3.11 on PATH (python3.13, python3.12, python3.11, python3).
PYTHON ?=
VENV := .venv
PY := $(VENV)/bin/python
# `make run` installs what a user installs: the dependencies alone (mlx on Apple Silicon by
# its environment marker in pyproject.toml; no torch). `make test` adds the dev extra (whose
# torch comes from the index pip is configured with) and the dask extra (the scale-out tests).
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
# Prefect's local API starts in a subprocess; 20 s (its default) is too tight on a busy 2-core machine.
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 90
# run_ingest is also called outside a flow (tests, eval); its task logs then stay local.
export PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW ?= ignore

.PHONY: run test test-fast lint format install bench clean

# The script makes .venv (no rule of its own): it also replaces one an older Python left behind.
# --no-compile, as uv installs: Python compiles each module the first time it is imported, so
# only what runs is compiled, and the install takes about a third less time.
$(STAMP): pyproject.toml
	@scripts/make_venv.sh $(VENV) $(PYTHON)
	$(PY) -m pip install --quiet --no-compile -e .
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(PY) -m pip install --quiet --no-compile -e ".[dev,dask]"
	touch $(DEV_STAMP)

install: $(STAMP)

SAMPLE_QUERY ?= How do I persist a SwiftData model and sync it with CloudKit?

# Ingest the sample corpus into data/indexes/ (incremental: a second run costs nothing),
# then answer a sample query for an iOS 17 target.
run: $(STAMP)
	$(PY) -m flows.ingest data/sample
	$(PY) -m query "$(SAMPLE_QUERY)" --ios-version 17.0 --top-k 5

test: $(DEV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q

# The inner loop: ruff and the tests not marked slow (no model-backed stores, crash tests or
# browser). CI runs `make test`.
test-fast: $(DEV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -m "not slow" -n 2

# ruff, the import layers (.importlinter) and the type checker (pyproject's [tool.mypy]).
lint: $(DEV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy

format: $(DEV_STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# Results go to bench/out/ (git-ignored) and, by hand, into bench/README.md.
bench: $(DEV_STAMP)
	mkdir -p bench/out
	$(PY) bench/chunking.py --json > bench/out/chunking.json
	$(PY) bench/ingest.py --json > bench/out/ingest.json
	$(PY) bench/sqlite_store.py > bench/out/sqlite_store.txt
	$(PY) bench/query.py --json > bench/out/query.json
	@if [ -n "$(TIDB_BENCH_DSN)" ]; then \
		$(PY) bench/tidb_load.py --dsn "$(TIDB_BENCH_DSN)" > bench/out/tidb_load.txt; \
	else echo "bench/tidb_load.py skipped: set TIDB_BENCH_DSN=tidb://user:pw@host:port/db"; fi

clean:
	rm -rf data/indexes data/staging data/runs .pytest_cache
