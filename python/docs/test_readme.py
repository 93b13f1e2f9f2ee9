"""Runs every ```python block of README.md, in order, as a user would paste them, against fresh servers; and those of
docs/PROTOCOL.md's section "11. In plain pyarrow", the same calls without the package.

The blocks connect to $FLUXGATE_ADDR (else the default address), and to the HTTP address $FLUXGATE_HTTP (the lake's
REST catalog), and run with the working directory in which the server's data directory is ./fluxgate-data, as with
`fluxgate serve` run there. The blocks of the section "Authentication and TLS" are a second program, against a server
with TLS and the users ann (admin, password ann-password) and bob, with its certificate as ./ca.pem. A block that
raises fails the test with its README line.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from fluxgate_server import Server, free_port

README = Path(__file__).resolve().parents[2] / "README.md"
SECURED_SECTION = "Authentication and TLS"
PROTOCOL = README.parent / "docs" / "PROTOCOL.md"
PLAIN_PYARROW_SECTION = "11. In plain pyarrow"

# Runs the blocks one at a time in one namespace, each compiled with its README line numbers.
DRIVER = textwrap.dedent("""
    import json, sys
    namespace = {"__name__": "__main__"}
    for block in json.load(open(sys.argv[1])):
        print(f"--- {block['file']}:{block['line']}", flush=True)
        code = "\\n" * (block["line"] - 1) + block["source"]
        exec(compile(code, block["file"], "exec"), namespace)
""")


def python_blocks(text):
    """Returns the python blocks as (section heading, first line of code, source), in order."""
    blocks, heading, lines = [], "", text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if m := re.match(r"#{1,6} (.*)", line):
            heading = m.group(1).strip()
        elif line.rstrip() == "```python":
            j = i + 1
            while lines[j].rstrip() != "```":
                j += 1
            blocks.append((heading, i + 2, "".join(lines[i + 1:j])))
            i = j
        elif line.startswith("```"):  # skip other fences, whose lines may start with '#'
            i += 1
            while not lines[i].startswith("```"):
                i += 1
        i += 1
    return blocks


def run_program(blocks, cwd, env, file="README.md"):
    path = cwd / "blocks.json"
    path.write_text(json.dumps([{"file": file, "line": line, "source": source} for line, source in blocks]))
    out = subprocess.run([sys.executable, "-c", DRIVER, str(path)], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, f"a {file} block failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_readme_python_blocks(tmp_path, secured):
    blocks = python_blocks(README.read_text())
    plain = [(line, src) for heading, line, src in blocks if heading != SECURED_SECTION]
    tls = [(line, src) for heading, line, src in blocks if heading == SECURED_SECTION]
    assert len(plain) >= 5 and len(tls) >= 2, f"README's python blocks not found: {len(plain)}, {len(tls)}"

    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    http = f"127.0.0.1:{free_port()}"  # the lake's REST catalog, for the blocks as FLUXGATE_HTTP
    with Server(plain_dir / "fluxgate-data", ["--http", http]) as srv:
        out = run_program(plain, plain_dir, {**os.environ, "FLUXGATE_ADDR": srv.address, "FLUXGATE_HTTP": http})
    # The follow printed the batch written while it ran, from both buckets: "bucket next rows".
    assert re.search(r"^0 \d+ 2$", out, re.M) and re.search(r"^1 \d+ 1$", out, re.M), out

    tls_dir = tmp_path / "secured"
    tls_dir.mkdir()
    shutil.copy(secured.ca, tls_dir / "ca.pem")
    with Server(tls_dir / "fluxgate-data", secured.server_args(), tls=True) as srv:
        run_program(tls, tls_dir, {**os.environ, "FLUXGATE_ADDR": srv.address})


def test_protocol_pyarrow_blocks(tmp_path, server):
    blocks = [(line, src) for heading, line, src in python_blocks(PROTOCOL.read_text())
              if heading == PLAIN_PYARROW_SECTION]
    assert len(blocks) >= 2, f"PROTOCOL.md's pyarrow blocks not found: {len(blocks)}"
    out = run_program(blocks, tmp_path, {**os.environ, "FLUXGATE_ADDR": server.address}, file="docs/PROTOCOL.md")
    # The follow saw the batch written while it ran, from both buckets; the lookup gave user_a the same id twice.
    assert re.search(r"\(0, \d+, 2\)", out) and re.search(r"\(1, \d+, 1\)", out), out
    assert "'id': [1, 2, 1]" in out, out
