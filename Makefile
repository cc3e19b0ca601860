# dmlopt: `make test` and `make bench` work on a fresh clone (they create .venv).
# Installs come from requirements-lock.txt (exact versions, resolved by uv from pyproject.toml's
# ranges), so an upstream release cannot break a fresh clone; `make test-latest` tries the
# newest versions pyproject allows, `make lock` re-resolves the lock.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV_VERSION := 0.13.9
LOCK := requirements-lock.txt
EXTRAS := test,cluster,cpsat,solvers
# pyproject's `solvers` extra, pinned (size-limited licences; about 320 MB, 4 s with uv): the
# lock stays as resolved, these install after it; where a platform has no wheel, their tests skip
SOLVER_PINS := gurobipy==13.0.3 cplex==22.2.0.1 xpress==9.9.1 xpresslibs==9.9.1 coptpy==8.0.7

.PHONY: test test-fast bench lint venv lock test-latest clean mutation

# bytecode is compiled at install: where PYTHONDONTWRITEBYTECODE is set, every process (the CLI,
# its tests) would otherwise compile pyomo and pandas again (2.7 s instead of 0.8 s per import)
$(BIN)/dmlopt: pyproject.toml $(LOCK)
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -r $(LOCK)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode $(SOLVER_PINS) || \
	  echo "dmlopt: the commercial solvers' packages did not install; their tests are skipped"
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	$(BIN)/python -m compileall -q dmlopt models heuristics benchmarks data
	touch $(BIN)/dmlopt

venv: $(BIN)/dmlopt

lint: venv
	$(BIN)/ruff check .

# every test, on three pytest-xdist workers (the CI machine has 2 cores; a third worker runs
# while the others wait on subprocesses and Ctrl-C tests), printing the 25 slowest (times:
# docs/development.md)
test: venv lint
	$(BIN)/python -m pytest -n 3 --durations=25

# the fast tier: contracts, evaluators, the boundary, docs and one small case per problem
# (-m "not slow": tests/conftest.py's FAST modules), hypothesis profile "fast"
test-fast: venv
	HYPOTHESIS_PROFILE=fast $(BIN)/python -m pytest -n 2 -m "not slow"

bench: venv
	$(BIN)/dmlopt bench quick --workers 2 -o results/quick.sqlite
	$(BIN)/dmlopt report results/quick.sqlite -o results/quick-report

# mutation testing of the evaluators and the report's gap (cosmic-ray, installed on demand; not
# part of `make test`): edits files in place and restores them, run it on a clean tree.
# TARGETS="report_gap inc_oxc" restricts it (names: tests/mutation/run.py)
mutation: venv
	$(BIN)/uv pip install --quiet --python $(BIN)/python cosmic-ray==8.7.0
	$(BIN)/python tests/mutation/run.py $(TARGETS)

# re-resolve the lock: the newest versions pyproject.toml allows, for every platform
lock: venv
	$(BIN)/uv pip compile pyproject.toml --extra test --extra cluster --extra cpsat --universal \
	  --python-version 3.11 --quiet -o $(LOCK)

# the tests against the newest allowed versions, in a separate .venv-latest
test-latest:
	rm -rf .venv-latest
	$(PY) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet uv==$(UV_VERSION)
	.venv-latest/bin/uv pip install --quiet --python .venv-latest/bin/python --upgrade \
	  -e '.[$(EXTRAS)]'
	.venv-latest/bin/uv pip list --python .venv-latest/bin/python | \
	  grep -iE '^(highspy|pyscipopt|pyomo|numpy|pandas|pydantic|networkx) '
	.venv-latest/bin/ruff check .
	.venv-latest/bin/python -m pytest -n 2

clean:
	rm -rf $(VENV) .venv-latest build *.egg-info results
