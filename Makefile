# Two commands set everything up on a fresh clone: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
UNAME_S := $(shell uname -s)
UNAME_M := $(shell uname -m)
# Apple Silicon embeds with MLX; everything else with torch (CPU build, or CUDA where present).
# dask: the tests of the vector phase on a Dask cluster (docs/scaling.md) run, not skip.
ifeq ($(UNAME_S)-$(UNAME_M),Darwin-arm64)
EXTRAS := mlx,torch,dev,dask
else
EXTRAS := torch,dev,dask
endif
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export DO_NOT_TRACK := 1
# Prefect's local API starts in a subprocess; 20 s (its default) is too tight on a busy 2-core box.
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 90
# run_ingest is also called outside a flow (tests, eval); its task logs then stay local.
export PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW ?= ignore

.PHONY: run test test-fast lint format install bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned, so that no dependency drags in a CUDA build.
	$(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

SAMPLE_QUERY ?= How do I persist a SwiftData model and sync it with CloudKit?

# Ingest the sample corpus into data/indexes/ (incremental: a second run costs nothing),
# then answer a sample query for an iOS 17 target.
run: $(STAMP)
	$(PY) -m flows.ingest data/sample
	$(PY) -m query "$(SAMPLE_QUERY)" --ios-version 17.0 --top-k 5

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q

# The inner loop: ruff and the tests not marked slow (no model-backed stores, crash tests or
# browser). CI runs `make test`.
test-fast: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -m "not slow" -n 2

# ruff, the import layers (.importlinter) and the type checker (pyproject's [tool.mypy]).
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) -m mypy

format: $(STAMP)
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# Results go to bench/out/ (git-ignored) and, by hand, into bench/README.md.
bench: $(STAMP)
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
