# make test runs every suite of every language, installing what it needs on a fresh machine.
# `go test ./...` stays the Go suite alone.

GO      ?= go
PYTHON  ?= python3.11
VENV    := python/.venv
VPY     := $(VENV)/bin/python
BIN     := bin/fluxgate
# staticcheck, pinned: go run fetches and builds it once into the build cache, on a fresh machine too.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Every suite that starts a server starts this binary, built once from this checkout.
export FLUXGATE_BIN := $(abspath $(BIN))

.PHONY: test build vet lint go-test fuzz python-test readme-test notebook-test java-test venv

test: build vet lint go-test python-test readme-test notebook-test java-test

# Always invoked: go build is a no-op when nothing changed.
build:
	$(GO) build -o $(BIN) ./cmd/fluxgate

vet:
	$(GO) vet ./...

# staticcheck's default checks (its unused code among them) over the module, and ruff over python/ (its rules are in
# python/pyproject.toml). Who may print or exit (fmt.Print*, log.Fatal* only in cmd/ and main packages) is a rule of
# internal/lint, which go-test runs.
lint: venv
	scripts/timed lint-go $(GO) run $(STATICCHECK) ./...
	cd python && ../scripts/timed lint-python .venv/bin/ruff check .

# Every Fuzz target's seeds and its testdata/fuzz corpus run here as plain tests: a decoder that once failed keeps
# its input there. The random phase is `make fuzz`, never part of test: a new finding must not fail an unrelated
# change; it is fixed and its input committed to the corpus.
go-test: build
	scripts/timed go-test $(GO) test -race ./...

# Random fuzzing of every Fuzz target, FUZZTIME each (default 5s).
fuzz:
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
	cd python && ../scripts/timed python-test .venv/bin/python -m pytest tests

readme-test: build venv
	cd python && ../scripts/timed readme-test .venv/bin/python -m pytest docs/test_docs.py

notebook-test: build venv
	cd python && ../scripts/timed notebook-test .venv/bin/python -m pytest docs/test_notebook.py

# One Maven build for the JVM modules; Maven fetches from Central on a fresh machine, from ~/.m2 after.
# No -q: Surefire's "Tests run:" lines are the suite's summary. The venv's pyspark-client runs docs/spark.md's
# pyspark blocks (ReadmePysparkTest).
java-test: build venv
	scripts/timed java-test mvn -B -ntp -T 1C -f java/pom.xml verify
