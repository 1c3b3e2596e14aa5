# svm-models: developer entry points. Every target is idempotent: finished steps are
# remembered by stamp files inside the venv and skipped on the next run.
#
#   make setup    venv + editable install with all extras + Ipopt (cyipopt + PyNumero)
#   make demo     run the demo
#   make test     run the test suite (PYTEST_ARGS=-q by default) on PYTEST_JOBS processes
#                 (pytest-xdist; 2 by default, 0: in this process); the hand-outs' runs
#                 (marker book) are make docs'

#   make fuzz     the property-based tests with many more examples (SVM_MODELS_FUZZ=1)
#   make test-perturbed  the whole suite on data perturbed at the 1e-12 level
#   make docs     build the book into docs/_build/html (every page executed, warnings as errors)
#                 and run every hand-out notebook as a reader does (tests/test_book.py -m book)
#   make check-docs  open every page of the built book in headless Chromium and check it; with
#                 no Chromium it fails, unless CHECK_DOCS_ARGS=--allow-skip (or the environment
#                 variable SVM_MODELS_CHECK_DOCS_ALLOW_SKIP=1) says to skip
#   make bench    run the benchmarks (BENCH_ARGS passed through)
#   make mutate   mutation testing (mutmut) of the modules that decide answers, on a fast subset
#                 of the suite ([tool.mutmut] in pyproject.toml); not part of `make test`.
#                 MUTANTS="svm_models.solvers.ipm*" limits it, MUTATE_JOBS sets the workers;
#                 score and surviving mutants: tests/mutation/README.md
#   make clean    remove the venv and build directories
#
# Override e.g.:  make test VENV=/tmp/venv PYTHON=python3.11 PYTEST_ARGS="-x -k kernel"

VENV ?= .venv
PYTHON ?= python3
PYTEST_ARGS ?= -q
# make test: pytest-xdist workers. Tests that must not overlap each other (the process pools
# and Dask clusters of tests/test_cv.py, the wall-clock limits of tests/test_deadline.py) carry
# an xdist_group mark and run one after another on one worker (--dist loadgroup).
PYTEST_JOBS ?= 2
BENCH_ARGS ?=
# make mutate: the mutants to run (mutmut name globs; empty: every one) and parallel workers
MUTANTS ?=
MUTATE_JOBS ?= 2

VENV_PY := $(VENV)/bin/python

# Stamps (all inside the venv, so `make clean` or deleting the venv resets them).
VENV_STAMP := $(VENV)/pyvenv.cfg
PIP_STAMP := $(VENV)/.stamp-pip-upgraded
INSTALL_STAMP := $(VENV)/.stamp-installed

.PHONY: setup demo test fuzz test-perturbed docs check-docs bench mutate clean

setup: $(INSTALL_STAMP)
	$(VENV_PY) -m svm_models.setup_ipopt

# pyvenv.cfg is a plain file written by `venv` (bin/python is a symlink whose mtime is the
# interpreter's), so it is a reliable "venv exists" marker.
$(VENV_STAMP):
	$(PYTHON) -m venv $(VENV)

$(PIP_STAMP): $(VENV_STAMP)
	$(VENV_PY) -m pip install --upgrade pip
	touch $@

# Re-install only when pyproject.toml or the tested versions changed since the last install.
# constraints.txt pins every dependency to the set CI tests.
$(INSTALL_STAMP): pyproject.toml constraints.txt $(PIP_STAMP)
	$(VENV_PY) -m pip install -c constraints.txt -e ".[all,dev]"
	touch $@

demo: setup
	$(VENV)/bin/svm-models demo

# pytest exits 5 when it collects no tests: that is a failure too, said plainly.
PYTEST_XDIST := $(if $(filter-out 0,$(PYTEST_JOBS)),-n $(PYTEST_JOBS) --dist loadgroup)
test: setup
	@echo "$(VENV_PY) -m pytest $(PYTEST_XDIST) -m 'not book' $(PYTEST_ARGS)"; \
	rc=0; $(VENV_PY) -m pytest $(PYTEST_XDIST) -m 'not book' $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests (exit 5): failing" >&2; fi; \
	exit $$rc

# Hypothesis profile "fuzz": a few hundred examples per property (tests/test_fuzz.py).
fuzz: setup
	SVM_MODELS_FUZZ=1 $(VENV_PY) -m pytest $(PYTEST_ARGS) tests/test_fuzz.py

# The feature values of the tests' shared data perturbed by a relative 1e-12 (tests/conftest.py):
# the same answers to tolerance. Not part of `make test` (it runs the whole suite again).
# (The libsvm references stored for the exact data, tests/data/libsvm_references.json, are
# solved live on perturbed data: minutes longer.)
test-perturbed: setup
	SVM_MODELS_PERTURB=1e-12 $(VENV_PY) -m pytest $(PYTEST_XDIST) $(PYTEST_ARGS)

# The book: pages generated from formulations/ and examples/ (docs/book.py), every notebook
# executed during the build, warnings as errors, no network (the catalogue's backend columns
# first written from the backend table: docs/backend_columns.py); then every hand-out notebook
# run as a reader runs it, in a fresh kernel in its own folder (tests/test_book.py's book
# marker: the book's own check, a second run of the same cells in another folder, minutes on
# two cores -- kept out of make test). DOCS_JOBS: parallel readers.
DOCS_JOBS ?= 2
docs: setup
	$(VENV_PY) docs/backend_columns.py
	$(VENV)/bin/sphinx-build -W --keep-going -q -j $(DOCS_JOBS) -b html docs docs/_build/html -d docs/_build/doctrees
	$(VENV_PY) -m pytest -q -p no:cacheprovider -m book tests/test_book.py
	@echo "make docs: docs/_build/html/index.html"

# docs/check_site.py: no Chromium is a failure unless CHECK_DOCS_ARGS=--allow-skip
CHECK_DOCS_ARGS ?=
check-docs: setup
	$(VENV_PY) docs/check_site.py $(CHECK_DOCS_ARGS)

bench: setup
	$(VENV_PY) benchmarks/run.py $(BENCH_ARGS)

# mutmut copies the package and the tests into mutants/ (git-ignored) and remembers results
# there: a second run re-tests only what changed. `mutmut results` lists the survivors,
# `mutmut show NAME` prints one as a diff. Exit status 0 whatever the score: read the summary.
# (mutmut forks each mutant's run from a process that has run the tests: Clarabel's thread
# pool (rayon) does not survive a fork, and a forked Clarabel solve waited for it forever --
# the mutants whose tests reach Clarabel stalled. With one rayon thread it runs in the fork.)
mutate: setup
	RAYON_NUM_THREADS=1 $(VENV)/bin/mutmut run --max-children $(MUTATE_JOBS) $(foreach m,$(MUTANTS),'$(m)')
	@$(VENV)/bin/mutmut results

# The PyNumero library built by `setup` lives in $PYOMO_CONFIG_DIR/lib (default ~/.pyomo/lib),
# outside the repo and shared by all venvs; it is left alone here.
clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache mutants docs/_build docs/formulations docs/examples docs/handouts
