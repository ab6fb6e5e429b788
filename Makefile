# Two commands on a fresh machine with Python 3.11 and make:
#   make dev    install into .venv if needed, then serve the agent on :2024
#   make test   install into .venv if needed, then run the test suite

# The prerequisites of `make test` (two virtual environments, four npm folders) install
# side by side: one after the other they took 4 min of a fresh clone's CI (a sub-make
# shares the top one's jobs).
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += --jobs=4
endif
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 2024
# Test processes (pytest-xdist). Most tests wait on a langgraph dev server, a browser or
# a socket, so more workers than cores pays; a module sharing a server stays on one
# worker, the Chromium modules go in two lanes (at most two pages at once), and the
# longest groups start first (tests/grouping.py). A fresh clone on 2 cores, 7 December:
# 4 workers, pytest 633 s (12:55 in all), each worker ~610 s of tests; 5 workers, 514 s
# (11:01), the two Chromium lanes (~490 s each) now the longest. More workers cannot beat
# the lanes, and would load the pages, whose answers must show within a second.
# TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= 5

.PHONY: dev test lint install clean layer-table webui-browser-table bench upstream-env bench-upstream upstream-pr

# The JS package's npm packages (clients/js), from its lockfile. Without npm the JS
# tests skip (and fail under CI, whose .ci/run installs node and npm).
JS := clients/js
JS_STAMP := $(JS)/node_modules/.installed
# The JS suites also run on the newest @langchain/langgraph-sdk 1.x (tests/support/jstools.py's
# NEWEST_SDK), installed with `npm install --no-save` into a prefix of its own, so the
# lockfile stays on the version it pins. Its react and @langchain/core are clients/js's.
JS_SDK := $(shell sed -n 's/^NEWEST_SDK = "\(.*\)"$$/\1/p' tests/support/jstools.py)
ifeq ($(JS_SDK),)
$(error tests/support/jstools.py names no NEWEST_SDK)
endif
JS_SDK_DIR := $(JS)/node_modules/.sdk/$(JS_SDK)
JS_SDK_STAMP := $(JS_SDK_DIR)/.installed
# @langchain/core's floor (tests/support/jstools.py's CORE_FLOOR), for the unit tests, the same way.
JS_CORE := $(shell sed -n 's/^CORE_FLOOR = "\(.*\)"$$/\1/p' tests/support/jstools.py)
ifeq ($(JS_CORE),)
$(error tests/support/jstools.py names no CORE_FLOOR)
endif
JS_CORE_DIR := $(JS)/node_modules/.core/$(JS_CORE)
JS_CORE_STAMP := $(JS_CORE_DIR)/.installed
# The AI SDK's major before the lockfile's (tests/support/jstools.py's AI_PREVIOUS), the same way.
JS_AI := $(shell sed -n 's/^AI_PREVIOUS = "\(.*\)"$$/\1/p' tests/support/jstools.py)
ifeq ($(JS_AI),)
$(error tests/support/jstools.py names no AI_PREVIOUS)
endif
JS_AI_DIR := $(JS)/node_modules/.ai/$(JS_AI)
JS_AI_STAMP := $(JS_AI_DIR)/.installed

# The CopilotKit proof's npm packages (tests/js/copilotkit: @copilotkit/runtime, @ag-ui/langgraph,
# @ag-ui/client, @copilotkit/react-core and react for its page; ~720 MB), from a lockfile of
# its own, so clients/js's install stays small.
CK := tests/js/copilotkit
CK_STAMP := $(CK)/node_modules/.installed

# LangGraph's JavaScript server for the route's tests (tests/jsserver: a langgraph.js
# project as a user makes one, @langchain/langgraph-cli and -api, the final-answer route
# mounted as its http.app; tests/support/js_server.py), from a lockfile of its own (~160 MB).
# Its @evoscientist/final-answer is a symlink to clients/js, whose own node_modules the
# route's imports (hono) resolve from at run time: installed first (order only; npm ci
# here does not read them).
JSSERVER := tests/jsserver
JSSERVER_STAMP := $(JSSERVER)/node_modules/.installed

# Bytecode for a venv's packages, written once, on both cores: where PYTHONDONTWRITEBYTECODE
# is set (as on this project's machines) no interpreter writes its own, so every server,
# CLI and script the suite starts would compile what it imports from source again (about
# half of an upstream process's start-up CPU). pip's own compiling is one file at a time,
# hence --no-compile and this. A file that does not compile (a package's Python 2 test
# data) is one that is never imported.
compile_venv = $(1)/bin/python -m compileall -q -j 0 $(1)/lib >/dev/null 2>&1 || true

# The demo (EvoScientist/: agent, offline model, checkpointer, /api/models) is not in
# the package (evoscientist_final_answer): the repository root goes on the venv's path.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -c constraints.txt -e ".[dev]"
	$(BIN)/python -c 'import site, sys; open(site.getsitepackages()[0] + "/evoscientist-demo.pth", "w").write(sys.argv[1] + "\n")' "$(CURDIR)"
	$(call compile_venv,$(VENV))
	touch $(STAMP)

$(JS_STAMP): $(JS)/package.json $(JS)/package-lock.json
	@if command -v npm >/dev/null; then \
		cd $(JS) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the JS tests will skip"; fi

$(CK_STAMP): $(CK)/package.json $(CK)/package-lock.json
	@if command -v npm >/dev/null; then \
		cd $(CK) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the CopilotKit proof will skip"; fi

$(JSSERVER_STAMP): $(JSSERVER)/package.json $(JSSERVER)/package-lock.json | $(JS_STAMP)
	@if command -v npm >/dev/null; then \
		cd $(JSSERVER) && npm ci --no-audit --no-fund --loglevel=error && touch node_modules/.installed; \
	else echo "npm not found: the JS server tests will skip"; fi

$(JS_SDK_STAMP): $(JS_STAMP)
	@if command -v npm >/dev/null; then \
		mkdir -p $(JS_SDK_DIR) && npm install --no-save --no-audit --no-fund --loglevel=error \
			--legacy-peer-deps --prefix $(JS_SDK_DIR) @langchain/langgraph-sdk@$(JS_SDK) \
		&& touch $(JS_SDK_STAMP); \
	else echo "npm not found: the JS tests will skip"; fi

$(JS_CORE_STAMP): $(JS_STAMP)
	@if command -v npm >/dev/null; then \
		mkdir -p $(JS_CORE_DIR) && npm install --no-save --no-audit --no-fund --loglevel=error \
			--legacy-peer-deps --prefix $(JS_CORE_DIR) @langchain/core@$(JS_CORE) \
		&& touch $(JS_CORE_STAMP); \
	else echo "npm not found: the JS tests will skip"; fi

$(JS_AI_STAMP): $(JS_STAMP)
	@if command -v npm >/dev/null; then \
		mkdir -p $(JS_AI_DIR) && npm install --no-save --no-audit --no-fund --loglevel=error \
			--legacy-peer-deps --prefix $(JS_AI_DIR) ai@$(JS_AI) \
		&& touch $(JS_AI_STAMP); \
	else echo "npm not found: the JS tests will skip"; fi

install: $(STAMP) $(JS_STAMP) $(JS_SDK_STAMP) $(JS_CORE_STAMP) $(JS_AI_STAMP) $(CK_STAMP) $(JSSERVER_STAMP)

dev: $(STAMP)
	$(BIN)/langgraph dev --no-browser --host 127.0.0.1 --port $(PORT)

test: $(STAMP) $(JS_STAMP) $(JS_SDK_STAMP) $(JS_CORE_STAMP) $(JS_AI_STAMP) $(CK_STAMP) $(JSSERVER_STAMP) upstream-env
	$(BIN)/ruff check EvoScientist evoscientist_final_answer tests upstream
	$(BIN)/python -m compileall -q -j 0 -x node_modules EvoScientist evoscientist_final_answer tests >/dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check EvoScientist evoscientist_final_answer tests upstream
	$(BIN)/ruff format --check EvoScientist evoscientist_final_answer tests upstream

clean:
	rm -rf $(VENV) $(UPSTREAM_VENV) .pytest_cache .ruff_cache .langgraph_api $(JS)/node_modules $(CK)/node_modules \
		$(JSSERVER)/node_modules

# Re-measure each recovery layer's share against a real server (docs/webui-layer-table.md).
layer-table: $(STAMP)
	EVOSCIENTIST_LAYER_TABLE=docs/webui-layer-table.md $(BIN)/python -m pytest -q --timeout=0 tests/recovery/test_layers.py

# What a browser shows per fault and per thing a user does mid-run (Stop, a thread
# switch) (docs/webui-browser-table.md): bare useStream vs useStreamWithRecovery on each
# SDK of the matrix (tests/support/jstools.py's SDKS), and @langchain/react, assistant-ui,
# @langchain/svelte and CopilotKit bare vs their drop-ins. Each group of columns is
# measured by its own test and merged into the file with what it was measured on
# (tests/support/browser_table.py), so TABLE_K can re-measure one group alone:
# TABLE_K=sdk-1.15.0 (useStream on that SDK), TABLE_K=sdk-1.9.25, TABLE_K=langchain_react,
# TABLE_K=assistant_ui, TABLE_K=svelte or TABLE_K=copilotkit. About 45 min in all.
TABLE_K ?=
webui-browser-table: $(STAMP) $(JS_STAMP) $(JS_SDK_STAMP) $(CK_STAMP)
	EVOSCIENTIST_BROWSER_TABLE=docs/webui-browser-table.md $(BIN)/python -m pytest -q --timeout=0 \
		tests/js/test_browser_recovery.py tests/js/test_browser_langchain_react.py \
		tests/js/test_browser_assistant_ui.py tests/js/test_browser_svelte.py \
		tests/js/test_copilotkit.py tests/js/test_browser_ai_sdk.py -k "measure$(if $(TABLE_K), and $(TABLE_K))"

# Timings, not tests: medians side by side, written to docs/benchmarks.md and
# docs/benchmarks-upstream.md (~23 min; the JS server's section by bench.js_server).
# Then the crowd inside upstream EvoScientist 0.3.8's own server (bench-upstream).
bench: $(STAMP) upstream-env $(JSSERVER_STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,bench]"
	status=0; $(BIN)/python -m bench || status=$$?; \
	$(BIN)/python -m bench.js_server || status=$$?; \
	$(BIN)/python -m bench.upstream || status=$$?; exit $$status

# The upstream proof's environment (tests/upstream/): evoscientist 0.3.8 from the package
# index, then this repository's distribution installed beside it (not editable, as a user
# installs it), then `pip check`; the release's wheel file is kept in wheel/. upstream's RECORD is kept as it was before ours went
# in: the tests check that no upstream file was replaced. Rebuilt only when the pin
# changes (.venv-upstream/.upstream) or our distribution does (.installed). If it cannot
# be built, `make test` goes on locally (its tests skip, saying why) and fails under CI.
UPSTREAM_VENV := .venv-upstream
UPSTREAM_BASE := $(UPSTREAM_VENV)/.upstream
UPSTREAM_STAMP := $(UPSTREAM_VENV)/.installed
# The release's wheel file itself (pip's cache makes it cheap): the server test unzips
# it and applies docs/upstream-adoption.md's diff to that pristine tree.
UPSTREAM_WHEEL := $(UPSTREAM_VENV)/wheel/.downloaded
PACKAGE_SOURCES := $(shell find evoscientist_final_answer -name '*.py' 2>/dev/null)

$(UPSTREAM_BASE): constraints-upstream.txt
	rm -rf $(UPSTREAM_VENV)
	$(PYTHON) -m venv $(UPSTREAM_VENV)
	$(UPSTREAM_VENV)/bin/python -m pip install --quiet --no-compile -c constraints-upstream.txt evoscientist
	cp $(UPSTREAM_VENV)/lib/python3*/site-packages/evoscientist-*.dist-info/RECORD \
		$(UPSTREAM_VENV)/evoscientist-RECORD.before
	touch $@

$(UPSTREAM_WHEEL): $(UPSTREAM_BASE)
	rm -rf $(dir $@)
	$(UPSTREAM_VENV)/bin/python -m pip download --quiet --no-deps -c constraints-upstream.txt \
		-d $(dir $@) evoscientist
	touch $@

$(UPSTREAM_STAMP): $(UPSTREAM_BASE) $(UPSTREAM_WHEEL) pyproject.toml $(PACKAGE_SOURCES)
	rm -f $@
	$(UPSTREAM_VENV)/bin/python -m pip install --quiet --no-compile -c constraints-upstream.txt .
	$(UPSTREAM_VENV)/bin/python -m pip check
	$(call compile_venv,$(UPSTREAM_VENV))
	touch $@

upstream-env:
	@$(MAKE) --no-print-directory $(UPSTREAM_STAMP) || case "$$CI" in \
		1|true|yes) exit 1 ;; \
		*) echo "The upstream environment could not be built: tests/upstream/ will skip." ;; \
	esac

# The crowd figures inside upstream 0.3.8's own server with the one-line adoption
# (docs/benchmarks-upstream.md; a few minutes).
bench-upstream: $(STAMP) upstream-env
	$(BIN)/python -m bench.upstream

# Upstream's own checks on the kit (upstream/): the EvoScientist-WebUI at 9c90a77 and the
# evoscientist 0.3.8 sdist, each unchanged and with its patch, side by side (npm ci, prettier,
# eslint, tsc, vitest, next build; upstream's pytest, ruff, pip check, its launcher). Not
# part of `make test` (they take long: the WebUI's installs and build, upstream's suite);
# what they cost is cached in .upstream-checks/. Exits non-zero on a failure the
# unchanged tree does not have.
# WEBUI_MIRROR: a local git directory of EvoScientist-WebUI holding 9c90a77 (default: a
# bare clone of its repository, made once in .upstream-checks/).
WEBUI_MIRROR ?=
upstream-pr: $(STAMP) $(JS_STAMP)
	status=0; $(BIN)/python upstream/checks/webui.py $(if $(WEBUI_MIRROR),--mirror $(WEBUI_MIRROR)) || status=$$?; \
	$(BIN)/python upstream/checks/server.py || status=$$?; exit $$status
