# chatx: make demo (try it) and make test (every check). `make help` lists the rest.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEMO   ?= fixtures/chat-chunk/tool-call-parallel.sse

.DEFAULT_GOAL := help
.PHONY: help venv install dev demo test lint format fixtures fixtures-check bench bench-quick fuzz clean

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python ## Install chatx into .venv
	$(BIN)/pip install --quiet -e .

dev: $(BIN)/python ## Install chatx, the serve extra and the dev tools (openai, openai-agents and anthropic SDKs, pytest, hypothesis, ruff, mypy)
	$(BIN)/pip install --quiet -e '.[dev,serve]'

demo: install ## Convert a bundled chat-chunk capture to responses-event and print it
	$(BIN)/chatx convert $(DEMO) --to responses-event

lint: dev ## ruff check, format check and the type check (mypy)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check chatx tests bench
	$(BIN)/mypy

format: dev ## Format the code
	$(BIN)/ruff format chatx tests bench
	$(BIN)/ruff check --fix .

test: dev lint fixtures-check ## Every check: lint, stale fixtures, the test suite
	$(BIN)/pytest -q -n 2 -p no:cacheprovider

fixtures: install ## Regenerate the golden fixtures with chatx itself (prints GEN <path>)
	$(BIN)/python -m tests.goldens

fixtures-check: install ## Fail when a golden fixture is stale
	$(BIN)/python -m tests.goldens --check

bench: dev ## Benchmark every direction at 1k..1M chunks, and the gateway per event (writes bench/results.md, bench/gateway-results.md)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/gateway.py

bench-quick: install ## A short benchmark run
	$(BIN)/python bench/run.py --quick

fuzz: dev ## A long fuzzing campaign (100k+ inputs)
	CHATX_FUZZ_EXAMPLES=100000 $(BIN)/pytest -q -p no:cacheprovider tests/test_fuzz.py

clean: ## Remove the venv and caches
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis bench/out
