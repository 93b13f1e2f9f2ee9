"""Runs the examples of the documentation as a user would paste them, against real servers: README.md, every
Markdown file under docs/, and python/README.md (java/README.md is the Java suite's: its blocks build the JVM side).

Every fenced block runs, or its fence says which suite runs it or why nothing does. A fence is ```LANG, optionally
followed by one attribute in braces, and what becomes of the block is:

    python                      run: the file's blocks, in order, in one Python session (one namespace)
    sh                          run: bash -e -o pipefail, in the file's directory, where ./fluxgate is $FLUXGATE_BIN
                                (the binary the test command built, as `go build -o fluxgate ./cmd/fluxgate` does)
    go                          run: a whole program (package main), by `go run` in .docs-go/ (git ignores it)
                                inside the module
    sql {duckdb}                run: its statements in DuckDB, with the iceberg extension from its PyPI packages;
                                the documented HTTP address 127.0.0.1:8816 becomes the server's
    json                        parsed: a file's or a message's format, which must be valid JSON
    text, or no language        prose in a fixed font
    LANG {norun: REASON}        not run, for REASON, which must not be empty
    sql, in docs/flink.md       run by the Java suite, through Flink's SQL client (java/flink, ReadmeSqlIT)
    scala, python-pyspark,      run by the Java suite, in Spark
      in docs/spark.md
    arrows, in docs/DESIGN.md   checked by go test ./internal/lint
    anything else               fails the test: a new language needs a runner here, or a norun reason

The Java suite's languages are accepted only in the files that suite reads, so that a Flink SQL or Spark block
anywhere else fails here instead of passing unrun.

Each file is a program of its own, as a user follows one guide: its blocks run in order in a working directory in
which the server's data directory is ./fluxgate-data, with $FLUXGATE_ADDR (the Flight address) and $FLUXGATE_HTTP
(the HTTP address: the lake's REST catalog) set. Every file but docs/security.md runs against one server without
users, README.md first, so the tables their examples create must have distinct names across all files, which is
checked before anything runs. docs/security.md runs against a server with TLS and users, ann (an admin, password
ann-password) and bob, with its CA certificate as ./ca.pem. A block that fails fails its file's test, naming the
block's file and line, with the program's output.
"""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from fluxgate_server import Server, binary, free_port

REPO = Path(__file__).resolve().parents[2]
FILES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), REPO / "python" / "README.md"]
SECURED_FILES = {"docs/security.md"}
DOCUMENTED_HTTP = "127.0.0.1:8816"
BLOCK_TIMEOUT = 300  # seconds; `go run` links a client binary on a loaded machine

# How each runnable (language, attribute) runs; see the docstring for the rest.
RUNNERS = {("python", ""): "python", ("sh", ""): "sh", ("go", ""): "go", ("sql", "duckdb"): "duckdb"}
JAVA_SUITE = {"docs/flink.md": {"sql"}, "docs/spark.md": {"scala", "python-pyspark"}}
CHECKED_ELSEWHERE = {("docs/DESIGN.md", "arrows")}

# What a program's output must show, beyond every block's success.
EXPECTED_OUTPUT = {
    # The Python follow printed the batch written while it ran, from both buckets ("bucket next rows"); the Go
    # program read back its rows; the CLI printed the changelog; pyiceberg read the lake table.
    "README.md": [r"^0 \d+ 2$", r"^1 \d+ 1$", r"^rows read: 2$", r"^insert +\d+ ", r"rider: (large_)?string"],
    # The follow saw the batch written while it ran, from both buckets; the lookup gave user_a the same id twice.
    "docs/PROTOCOL.md": [r"\(0, \d+, 2\)", r"\(1, \d+, 1\)", r"'id': \[1, 2, 1\]"],
    # The lake snapshot is the one tier-now made, with both rows; DuckDB read them through the REST catalog.
    "docs/lake.md": [r"^True 2 2$", r"\('ann', 'home'"],
    # The grant is listed, by the package and by the CLI.
    "docs/security.md": [r"'principal': 'svc-etl'", r'"principal": "svc-etl"'],
}


@dataclass
class Block:
    file: str  # relative to the repository
    line: int  # of the block's first line
    lang: str
    attr: str  # inside the fence's braces, or ""
    source: str


FENCE = re.compile(r"^(?P<indent> *)```(?P<info>.*)$")
INFO = re.compile(r"^(?P<lang>[\w+-]*)\s*(?:\{(?P<attr>[^}]*)\})?$")


def blocks(path):
    """Returns the fenced blocks of a Markdown file of the repository, in order."""
    return blocks_of(path.read_text(), path.relative_to(REPO).as_posix())


def blocks_of(text, rel):
    """Returns the fenced blocks of the Markdown text of file rel, in order; a fence in a list item is dedented."""
    lines = text.splitlines(keepends=True)
    found, i = [], 0
    while i < len(lines):
        if m := FENCE.match(lines[i].rstrip("\n")):
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise ValueError(f"{rel}:{i + 1}: a fence that is never closed")
            info = INFO.match(m["info"].strip())
            if not info:
                raise ValueError(f"{rel}:{i + 1}: unreadable fence ```{m['info']}: want ```LANG or ```LANG {{ATTR}}")
            indent = len(m["indent"])
            source = "".join(line[indent:] if line[:indent].isspace() else line for line in lines[i + 1:j])
            found.append(Block(rel, i + 2, info["lang"], (info["attr"] or "").strip(), source))
            i = j
        i += 1
    return found


def runner(block):
    """Returns how this file runs the block ("python", "sh", "go" or "duckdb"), or None when it does not run it
    here; raises ValueError, naming the block, when its fence is not one the docstring allows."""
    where = f"{block.file}:{block.line - 1}: ```{block.lang}" + (f" {{{block.attr}}}" if block.attr else "")
    if block.attr.startswith("norun:"):
        if not block.attr.removeprefix("norun:").strip():
            raise ValueError(f"{where}: a norun block must say why it is not run")
        return None
    if (block.lang, block.attr) in RUNNERS:
        return RUNNERS[block.lang, block.attr]
    if block.attr:
        raise ValueError(f"{where}: unknown attribute")
    if block.lang in ("", "text") or block.lang in JAVA_SUITE.get(block.file, ()):
        return None
    if (block.file, block.lang) in CHECKED_ELSEWHERE:
        return None
    if block.lang == "json":
        try:
            json.loads(block.source)
        except ValueError as e:
            raise ValueError(f"{where}: not valid JSON: {e}") from None
        return None
    raise ValueError(f"{where}: no runner for this language here (python/docs/test_docs.py lists them); "
                     "run it, or mark it ```LANG {norun: why}")


def runnable(path):
    return [(b, how) for b in blocks(path) if (how := runner(b))]


@pytest.mark.parametrize("file, fence, source, how", [
    ("README.md", "python", "print(1)\n", "python"),
    ("README.md", "sh", "true\n", "sh"),
    ("docs/lake.md", "sql {duckdb}", "SELECT 1;\n", "duckdb"),
    ("README.md", "sh {norun: needs a TLS CA}", "x\n", None),
    ("README.md", "json", '{"a": 1}\n', None),
    ("README.md", "", "a diagram\n", None),
    ("docs/flink.md", "sql", "SELECT 1;\n", None),
    ("docs/spark.md", "scala", "spark.read\n", None),
    ("docs/spark.md", "python-pyspark", "spark.read\n", None),
    ("docs/DESIGN.md", "arrows", "a -> b\n", None),
    ("README.md", "sql", "SELECT 1;\n", ValueError),  # Flink SQL outside the file the Java suite reads
    ("docs/flink.md", "scala", "spark.read\n", ValueError),
    ("README.md", "arrows", "a -> b\n", ValueError),
    ("README.md", "ruby", "puts 1\n", ValueError),
    ("README.md", "sh {norun:}", "x\n", ValueError),
    ("README.md", "sh {norun}", "x\n", ValueError),
    ("README.md", "json", "{'a': 1}\n", ValueError),
    ("README.md", "sh norun: no braces", "x\n", ValueError),
])
def test_fence_rules(file, fence, source, how):
    """The docstring's table, fence by fence: each runs here, is another suite's or says why, or fails."""
    text = f"# Title\n\n```{fence}\n{source}```\n"
    if how is ValueError:
        with pytest.raises(ValueError):
            [block] = blocks_of(text, file)
            runner(block)
        return
    [block] = blocks_of(text, file)
    assert block.line == 4 and block.source == source
    assert runner(block) == how


# The names of the tables a block creates, by language: CLI, Python package or plain pyarrow, Go client.
CREATES = {
    "sh": [r"table create --name (\S+)"],
    "python": [r"create_table\(\s*\"([^\"]+)\"", r"\"create-table\",\s*\{\s*\"table\":\s*\"([^\"]+)\""],
    "go": [r"TableSpec\{\s*Table:\s*\"([^\"]+)\""],
}


def test_every_block_runs_or_says_why():
    errors = []
    for path in FILES:
        try:
            for b in blocks(path):
                try:
                    runner(b)
                except ValueError as e:
                    errors.append(str(e))
        except ValueError as e:
            errors.append(str(e))
    assert not errors, "\n".join(errors)
    readme = {how for _, how in runnable(REPO / "README.md")}
    assert readme >= {"sh", "python", "go"}, f"README.md's quick starts not found: {readme}"
    missing = (EXPECTED_OUTPUT.keys() | SECURED_FILES) - set(runnable_files())
    assert not missing, f"files named here without examples to run: {missing}"


def test_examples_create_distinct_tables():
    """All files but docs/security.md run on one server: a table two examples create would make the second one
    write into the first's (or fail on its schema)."""
    seen, clashes = {}, []
    for path in FILES:
        for b, how in runnable(path):
            for pattern in CREATES.get(how, []):
                for name in re.findall(pattern, b.source):
                    if name in seen:
                        clashes.append(f"{b.file}:{b.line}: {name} is created at {seen[name]} too")
                    seen.setdefault(name, f"{b.file}:{b.line}")
    assert not clashes, "\n".join(clashes)
    assert len(seen) >= 10, f"the examples' tables not found: {seen}"


# A Python session that runs the blocks it is sent, one at a time, and says after each whether it failed.
PYTHON_DRIVER = textwrap.dedent("""
    import json, os, sys, traceback
    blocks, status = os.fdopen(int(sys.argv[1])), os.fdopen(int(sys.argv[2]), "w")
    namespace = {"__name__": "__main__"}
    for message in blocks:
        block = json.loads(message)
        try:
            exec(compile("\\n" * (block["line"] - 1) + block["source"], block["file"], "exec"), namespace)
            result = "ok"
        except BaseException:
            traceback.print_exc()
            result = "failed"
        sys.stdout.flush()
        sys.stderr.flush()
        status.write(result + "\\n")
        status.flush()
""")

# Runs DuckDB statements (argv[1], JSON) in order and prints each one's rows.
DUCKDB_DRIVER = textwrap.dedent("""
    import importlib, json, pathlib, sys
    import duckdb
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    for name in ("httpfs", "avro", "iceberg"):
        package = pathlib.Path(importlib.import_module(f"duckdb_extension_{name}").__path__[0])
        con.execute(f"LOAD '{next(package.rglob(f'{name}.duckdb_extension'))}'")
    for statement in json.loads(sys.argv[1]):
        print(statement)
        for row in con.execute(statement).fetchall():
            print(row)
""")


class Program:
    """One file's examples: the directory and environment its blocks run in, its Python session, and its output."""

    def __init__(self, file, cwd, env):
        self.file, self.cwd, self.env = file, cwd, env
        self.output_path = cwd / (file.replace("/", "_") + ".out")
        self.output = open(self.output_path, "ab", buffering=0)
        self.python = None

    def run(self, block, how):
        self.output.write(f"--- {block.file}:{block.line} {how}\n".encode())
        start = time.monotonic()
        ok = getattr(self, f"_run_{how}")(block)
        self.output.write(f"--- {'ok' if ok else 'failed'} in {time.monotonic() - start:.1f} s\n".encode())
        assert ok, f"{block.file}:{block.line}: the {how} block failed:\n{self.tail()}"

    def tail(self, lines=80):
        return "\n".join(self.output_path.read_text(errors="replace").splitlines()[-lines:])

    def _process(self, args, cwd=None):
        """Runs args to the end with the program's output; True when it exited 0."""
        proc = subprocess.Popen(args, cwd=cwd or self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                                stdout=self.output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return proc.wait(BLOCK_TIMEOUT) == 0
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # with what the block started in the background
            proc.wait()
            self.output.write(f"timed out after {BLOCK_TIMEOUT} s\n".encode())
            return False

    def _run_sh(self, block):
        # Leading newlines make bash's "line N" the file's line.
        return self._process(["bash", "-e", "-o", "pipefail", "-c", "\n" * (block.line - 1) + block.source])

    def _run_go(self, block):
        if not re.match(r"(//.*\n|\s)*package main\b", block.source):
            self.output.write(b"a go block must be a whole program: package main, with func main\n")
            return False
        # Inside the module, so that its go.mod resolves the imports; a dot directory is outside ./... patterns.
        # The directory is the same at each run, so that go run finds the program it linked last time in its
        # cache (a new directory is a new program to it).
        directory = REPO / ".docs-go" / f"{block.file.replace('/', '_')}-{block.line}"
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False) as main:
            main.write(f"//line {block.file}:{block.line}\n{block.source}")
        os.replace(main.name, directory / "main.go")  # whole, should another run read it now
        return self._process(["go", "run", "main.go"], cwd=directory)

    def _run_duckdb(self, block):
        statements = [s.strip().replace(DOCUMENTED_HTTP, self.env["FLUXGATE_HTTP"])
                      for s in re.sub(r"--[^\n]*", "", block.source).split(";") if s.strip()]
        return self._process([sys.executable, "-c", DUCKDB_DRIVER, json.dumps(statements)])

    def _run_python(self, block):
        if self.python is None:
            blocks_r, blocks_w = os.pipe()
            status_r, status_w = os.pipe()
            proc = subprocess.Popen([sys.executable, "-c", PYTHON_DRIVER, str(blocks_r), str(status_w)],
                                    pass_fds=(blocks_r, status_w), cwd=self.cwd, env=self.env,
                                    stdin=subprocess.DEVNULL, stdout=self.output, stderr=subprocess.STDOUT)
            os.close(blocks_r)
            os.close(status_w)
            self.python = (proc, os.fdopen(blocks_w, "w"), os.fdopen(status_r))
        proc, to_python, from_python = self.python
        to_python.write(json.dumps({"file": block.file, "line": block.line, "source": block.source}) + "\n")
        to_python.flush()
        ready, _, _ = select.select([from_python], [], [], BLOCK_TIMEOUT)
        if not ready:
            self.output.write(f"timed out after {BLOCK_TIMEOUT} s\n".encode())
            return False
        return from_python.readline().strip() == "ok"  # "" when the session died

    def close(self):
        if self.python is not None:
            proc, to_python, from_python = self.python
            to_python.close()  # the session's loop ends
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            from_python.close()
        self.output.close()


def environment(cwd, addr, http):
    """The blocks' environment: the test's, without the caller's fluxgate settings but $FLUXGATE_BIN."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUXGATE_") or k == "FLUXGATE_BIN"}
    (cwd / "fluxgate").symlink_to(binary())
    return {**env, "FLUXGATE_ADDR": addr, "FLUXGATE_HTTP": http}


def wait_healthy(http, timeout=30):
    deadline = time.monotonic() + timeout
    while True:  # the HTTP listener opens just after the Flight one
        try:
            urllib.request.urlopen(f"http://{http}/healthz", timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"the HTTP listener at {http} did not open within {timeout} s"
            time.sleep(0.02)


@pytest.fixture(scope="module")
def plain_env(tmp_path_factory):
    """The directory and environment of every file but docs/security.md, with their server."""
    cwd = tmp_path_factory.mktemp("docs")
    http = f"127.0.0.1:{free_port()}"
    with Server(cwd / "fluxgate-data", ["--http", http]) as srv:
        wait_healthy(http)
        yield cwd, environment(cwd, srv.address, http)


@pytest.fixture(scope="module")
def secured_env(tmp_path_factory, secured):
    cwd = tmp_path_factory.mktemp("docs-secured")
    shutil.copy(secured.ca, cwd / "ca.pem")
    with Server(cwd / "fluxgate-data", secured.server_args(), tls=True) as srv:
        yield cwd, environment(cwd, srv.address, "")


def runnable_files():
    files = []
    for path in FILES:
        try:
            if runnable(path):
                files.append(path.relative_to(REPO).as_posix())
        except ValueError:
            pass  # test_every_block_runs_or_says_why names it
    return files


@pytest.mark.parametrize("file", runnable_files())
def test_examples(file, request):
    cwd, env = request.getfixturevalue("secured_env" if file in SECURED_FILES else "plain_env")
    program = Program(file, cwd, env)
    try:
        for block, how in runnable(REPO / file):
            program.run(block, how)
    finally:
        program.close()
    out = program.output_path.read_text(errors="replace")
    for pattern in EXPECTED_OUTPUT.get(file, []):
        assert re.search(pattern, out, re.M), f"{file}: the output has no match for {pattern}:\n{program.tail()}"
