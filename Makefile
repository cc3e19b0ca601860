# dmlopt: `make test` and `make bench` work on a fresh clone (they create .venv).
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: test bench lint venv clean

$(BIN)/dmlopt: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,cluster]'
	touch $(BIN)/dmlopt

venv: $(BIN)/dmlopt

lint: venv
	$(BIN)/ruff check .

test: venv lint
	$(BIN)/python -m pytest

bench: venv
	$(BIN)/dmlopt bench quick --workers 2 -o results/quick.sqlite
	$(BIN)/dmlopt report results/quick.sqlite -o results/quick-report

clean:
	rm -rf $(VENV) build *.egg-info results
