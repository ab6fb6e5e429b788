# Two commands on a fresh machine with Python 3.11 and make:
#   make dev    install into .venv if needed, then serve the agent on :2024
#   make test   install into .venv if needed, then run the test suite

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 2024

.PHONY: dev test lint install clean layer-table bench

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

dev: $(STAMP)
	$(BIN)/langgraph dev --no-browser --host 127.0.0.1 --port $(PORT)

test: $(STAMP)
	$(BIN)/ruff check EvoScientist tests
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check EvoScientist tests
	$(BIN)/ruff format --check EvoScientist tests

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .langgraph_api

# Re-measure each recovery layer's share against a real server (docs/webui-layer-table.md).
layer-table: $(STAMP)
	EVOSCIENTIST_LAYER_TABLE=docs/webui-layer-table.md $(BIN)/python -m pytest -q tests/test_recovery_layers.py

# Timings, not tests: medians side by side, written to docs/benchmarks.md (~10 min).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,bench]"
	$(BIN)/python -m bench
