"""A manual check that Trino reads fluxgate's lake through the served Iceberg REST catalog, with docs/lake.md's
configuration, equal to `t$lake` over Flight.

Too heavy for CI (Trino's server is an 821 MB download and needs Java 24+), so it is run by hand:

    curl -fLO https://repo1.maven.org/maven2/io/trino/trino-server/476/trino-server-476.tar.gz   # into /tmp/trino
    curl -fLO https://repo1.maven.org/maven2/io/trino/trino-cli/476/trino-cli-476-executable.jar
    tar xzf trino-server-476.tar.gz
    FLUXGATE_BIN=$PWD/bin/fluxgate JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 \
        python/.venv/bin/python python/tools/trino_check.py --trino /tmp/trino

It starts two fluxgate servers, one without users and one with a static API token, each with lake-enabled tables
(a log table in two buckets with a column added between two rounds; a primary-key table with an update and a
delete), then one single-node Trino with a catalog for each (docs/lake.md's `lake.properties`: no auth, and OAUTH2
with the token), runs the guide's queries with trino-cli and compares every table's rows with `t$lake`. It exits
non-zero on the first difference or failure.
"""

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request

import pyarrow as pa
import pyarrow.flight as fl

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(PYTHON_DIR), str(PYTHON_DIR / "tests")]  # fluxgate_server, and the tests' flux helpers

from fluxgate_server import Server, free_port  # noqa: E402
from flux import action, command, path, put, read  # noqa: E402

TRINO_VERSION = "476"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trino", default="/tmp/trino", help="directory holding trino-server-476/ and the CLI jar")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, data)")
    args = ap.parse_args()
    trino_home = pathlib.Path(args.trino)
    java_home = os.environ.get("JAVA_HOME", "")
    if not (pathlib.Path(java_home) / "bin" / "java").exists():
        sys.exit("JAVA_HOME must name a Java 24+ JDK (Trino 476 needs it)")

    work = pathlib.Path(tempfile.mkdtemp(prefix="trino-check-"))
    token = secrets.token_urlsafe(24)
    users = work / "users.json"
    users.write_text(json.dumps({"users": [], "tokens": [
        {"name": "trino", "token_sha256": hashlib.sha256(token.encode()).hexdigest(), "admin": True}]}))
    plain_http, secured_http = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    with Server(work / "plain", ["--http", plain_http]) as plain, \
            Server(work / "secured", ["--http", secured_http, "--users", str(users)]) as secured:
        auth = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer " + token.encode())])
        expected = {}
        for catalog, srv, opts in (("lake", plain, None), ("lake_secured", secured, auth)):
            client = fl.connect(srv.address)
            for table in make_tables(client, opts):
                expected[f"{catalog}.{table}"] = lake_rows(client, table, opts)
            client.close()
        catalogs = {
            "lake": readme_catalog(plain_http),
            "lake_secured": readme_catalog(secured_http, token),
        }
        trino = Trino(trino_home, work / "trino", java_home, catalogs)
        try:
            trino.start()
            check(trino, expected)
        finally:
            trino.stop()
    if not args.keep:
        subprocess.run(["rm", "-rf", str(work)], check=True)
    print("trino-check: OK")


def readme_catalog(http, token=None):
    """docs/lake.md's etc/catalog/lake.properties, for the server at http."""
    props = {
        "connector.name": "iceberg",
        "iceberg.catalog.type": "rest",
        "iceberg.rest-catalog.uri": f"http://{http}/iceberg",
        "fs.hadoop.enabled": "true",
    }
    if token:
        props |= {"iceberg.rest-catalog.security": "OAUTH2", "iceberg.rest-catalog.oauth2.token": token}
    return props


def make_tables(client, opts):
    """fluss.clicks, a log table in two buckets with a column added between its two rounds, and fluss.users, a
    primary-key table whose second round has an update and a delete."""
    action(client, "create-database", {"database": "fluss", "if_not_exists": True}, options=opts)
    action(client, "create-table", {"table": "fluss.clicks", "columns": [
        {"name": "user", "type": "STRING"}, {"name": "page", "type": "STRING"}], "options": {
        "table.datalake.enabled": "true", "bucket.num": "2", "bucket.key": "user"}}, options=opts)
    put(client, path("fluss.clicks"), pa.record_batch({"user": ["ann", "bob", "cid"], "page": ["/a", "/b", "/c"]}),
        options=opts)
    action(client, "tier-now", {"table": "fluss.clicks"}, options=opts)
    action(client, "alter-table", {"table": "fluss.clicks", "add_columns": [{"name": "country", "type": "STRING"}]},
           options=opts)
    put(client, path("fluss.clicks"), pa.record_batch({"user": ["dan"], "page": ["/d"], "country": ["NL"]}),
        options=opts)
    action(client, "tier-now", {"table": "fluss.clicks"}, options=opts)

    action(client, "create-table", {"table": "fluss.users", "columns": [
        {"name": "id", "type": "BIGINT", "nullable": False}, {"name": "name", "type": "STRING"}],
        "primary_key": ["id"], "options": {"table.datalake.enabled": "true"}}, options=opts)
    put(client, path("fluss.users"), pa.record_batch({"id": pa.array([1, 2, 3], pa.int64()),
                                                       "name": ["ann", "bob", "cid"]}), options=opts)
    action(client, "tier-now", {"table": "fluss.users"}, options=opts)
    put(client, path("fluss.users"), pa.record_batch({"id": pa.array([1], pa.int64()), "name": ["anne"]}),
        options=opts)
    put(client, command({"write": {"table": "fluss.users", "mode": "delete"}}),
        pa.record_batch({"id": pa.array([2], pa.int64()), "name": pa.array([None], pa.string())}), options=opts)
    action(client, "tier-now", {"table": "fluss.users"}, options=opts)
    return ["fluss.clicks", "fluss.users"]


def lake_rows(client, table, opts):
    """`t$lake` over Flight, as sorted rows of strings in the form trino-cli's JSON output has them."""
    lake, _ = read(client, path(table + "$lake"), options=opts)
    return normalized([{n: text(v) for n, v in r.items()} for r in lake.to_pylist()])


def text(v):
    if v is None:
        return None
    if isinstance(v, datetime.datetime):  # timestamptz: trino prints microseconds in UTC
        return v.astimezone(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    return str(v)


def normalized(rows):
    return sorted(rows, key=lambda r: (int(r["__bucket"]), int(r["__offset"])))


def check(trino, expected):
    """docs/lake.md's queries: the catalog's namespaces and tables, then every table's rows."""
    for catalog in sorted({name.split(".")[0] for name in expected}):
        schemas = {r["Schema"] for r in trino.query(f"SHOW SCHEMAS FROM {catalog}")}
        require("fluss" in schemas, f"{catalog}: SHOW SCHEMAS has no fluss: {schemas}")
        tables = {r["Table"] for r in trino.query(f"SHOW TABLES FROM {catalog}.fluss")}
        want = {name.split(".", 2)[2] for name in expected if name.startswith(catalog + ".")}
        require(tables == want, f"{catalog}: SHOW TABLES is {tables}, want {want}")
    for name, want in sorted(expected.items()):
        got = normalized([{k: text(v) for k, v in r.items()} for r in trino.query(f"SELECT * FROM {name}")])
        require(got == want, f"{name}: trino read\n  {got}\nwhile t$lake is\n  {want}")
        print(f"trino-check: {name}: {len(got)} rows equal to t$lake")


def require(ok, message):
    if not ok:
        sys.exit(f"trino-check: FAILED: {message}")


class Trino:
    """A single-node Trino (coordinator and worker), only its iceberg plugin loaded, on a free port."""

    def __init__(self, home, work, java_home, catalogs):
        self.server = home / f"trino-server-{TRINO_VERSION}"
        self.cli = home / f"trino-cli-{TRINO_VERSION}-executable.jar"
        self.work, self.java_home, self.catalogs = work, java_home, catalogs
        self.port = free_port()
        self.proc = None

    def start(self, timeout=600):
        etc, plugins = self.work / "etc", self.work / "plugins"
        (etc / "catalog").mkdir(parents=True)
        plugins.mkdir()
        (plugins / "iceberg").symlink_to(self.server / "plugin" / "iceberg")
        (etc / "node.properties").write_text(
            f"node.environment=trino_check\nnode.id=trino-check\nnode.data-dir={self.work / 'var'}\n")
        (etc / "jvm.config").write_text("-server\n-Xmx2G\n-XX:+UseG1GC\n-XX:+ExitOnOutOfMemoryError\n"
                                        "-Djdk.attach.allowAttachSelf=true\n")
        (etc / "config.properties").write_text(
            "coordinator=true\nnode-scheduler.include-coordinator=true\n"
            f"http-server.http.port={self.port}\ndiscovery.uri=http://127.0.0.1:{self.port}\n"
            "node.internal-address=127.0.0.1\n"
            f"plugin.dir={plugins}\nquery.max-memory=1GB\nquery.max-memory-per-node=512MB\n")
        for name, props in self.catalogs.items():
            (etc / "catalog" / f"{name}.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.log = open(self.work / "server.log", "wb")
        self.proc = subprocess.Popen(
            [str(self.server / "bin" / "launcher"), "run", f"--etc-dir={etc}", f"--data-dir={self.work / 'var'}"],
            env=self.env(), stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while not self.started():
            if self.proc.poll() is not None:
                sys.exit(f"trino exited with {self.proc.returncode} while starting; see {self.work / 'server.log'}")
            if time.monotonic() > deadline:
                sys.exit(f"trino did not start within {timeout} s; see {self.work / 'server.log'}")
            time.sleep(1)

    def started(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/info", timeout=2) as r:
                return not json.load(r)["starting"]
        except OSError:
            return False

    def query(self, sql):
        out = subprocess.run(
            [str(pathlib.Path(self.java_home) / "bin" / "java"), "-jar", str(self.cli),
             "--server", f"http://127.0.0.1:{self.port}", "--output-format=JSON", "--execute", sql],
            env=self.env(), capture_output=True, text=True)
        require(out.returncode == 0, f"trino-cli {sql!r} exited with {out.returncode}:\n{out.stdout}{out.stderr}")
        return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]

    def env(self):
        return {**os.environ, "JAVA_HOME": self.java_home,
                "PATH": f"{pathlib.Path(self.java_home) / 'bin'}:{os.environ['PATH']}"}

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


if __name__ == "__main__":
    main()
