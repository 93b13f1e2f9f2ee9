# make test runs every suite of every language, installing what it needs on a fresh machine.
# `go test ./...` stays the Go suite alone.

GO      ?= go
PYTHON  ?= python3.11
VENV    := python/.venv
VPY     := $(VENV)/bin/python
BIN     := bin/fluxgate

# Every suite that starts a server starts this binary, built once from this checkout.
export FLUXGATE_BIN := $(abspath $(BIN))

.PHONY: test build vet go-test fuzz-smoke python-test readme-test notebook-test java-test venv

test: build vet go-test fuzz-smoke python-test readme-test notebook-test java-test

# Always invoked: go build is a no-op when nothing changed.
build:
	$(GO) build -o $(BIN) ./cmd/fluxgate

vet:
	$(GO) vet ./...

go-test: build
	$(GO) test -race ./...

fuzz-smoke:
	scripts/fuzz-smoke

# The venv is (re)installed only when requirements.txt or the package's pyproject.toml changed: the stamp is newer
# than both. The package is installed editable, so a change to its source needs no reinstall.
venv: $(VENV)/.installed

$(VENV)/.installed: python/requirements.txt python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet -r python/requirements.txt
	$(VPY) -m pip install --quiet --no-deps -e ./python
	touch $@

# pytest exits 5 when it collected no test, which fails make like any other failure.
python-test: build venv
	cd python && .venv/bin/python -m pytest tests

readme-test: build venv
	cd python && .venv/bin/python -m pytest docs/test_readme.py

notebook-test: build venv
	cd python && .venv/bin/python -m pytest docs/test_notebook.py

# One Maven build for the JVM modules; Maven fetches from Central on a fresh machine, from ~/.m2 after.
# No -q: Surefire's "Tests run:" lines are the suite's summary.
java-test: build
	mvn -B -ntp -T 1C -f java/pom.xml verify
