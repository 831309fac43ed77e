# `make serve` and `make test` (`make test-thorough`: the through-Ray relevance property at
# its full example count, tests/budget.py). Each builds its own virtual environment first.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 9200
ARGS   ?=

.PHONY: serve test test-thorough install notebook clean

$(BIN)/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) (Python 3.11+) on PATH"; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(BIN)/shardsearch serve --host $(HOST) --port $(PORT) $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# the same suite with the through-Ray relevance property at its full example count (tests/budget.py)
test-thorough: $(STAMP)
	SHARDSEARCH_THOROUGH=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

# Jupyter with the project's environment, on this machine only (127.0.0.1), in notebooks/
notebook: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[notebook]'
	$(BIN)/jupyter lab --ip 127.0.0.1 --notebook-dir notebooks

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
