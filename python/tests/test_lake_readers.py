"""Readers outside fluxgate read the lake: pyiceberg and DuckDB, through the served Iceberg REST catalog and from the
metadata file, read every kind of lake table equal to `t$lake` over Flight.

DuckDB's iceberg extension comes from PyPI packages (duckdb-extension-iceberg and its avro and httpfs dependencies,
pinned to duckdb's version in requirements.txt) and is loaded from their files: DuckDB's own extension repository is
not needed.
"""

import datetime
import importlib
import json
import pathlib
import time
import urllib.error
import urllib.request

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as fl
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.table import StaticTable

from fluxgate_server import Server, free_port
from flux import action, command, create_table, path, put, read, scan, unique


@pytest.fixture(scope="module")
def lake_server(tmp_path_factory):
    """A server with its HTTP listener (and so the lake catalog) on a free loopback port."""
    http = f"127.0.0.1:{free_port()}"
    with Server(tmp_path_factory.mktemp("lake-readers") / "data", ["--http", http]) as srv:
        srv.catalog_uri = f"http://{http}/iceberg"
        deadline = time.monotonic() + 30
        while True:  # the HTTP listener opens just after the Flight one
            try:
                urllib.request.urlopen(f"http://{http}/healthz", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP listener did not open within 30 s"
                time.sleep(0.02)
        yield srv


@pytest.fixture(scope="module")
def lake_client(lake_server):
    c = fl.connect(lake_server.address)
    yield c
    c.close()


@pytest.fixture(scope="module")
def rest(lake_server):
    return RestCatalog("fluxgate", uri=lake_server.catalog_uri)


@pytest.fixture(scope="module")
def duck(lake_server):
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    load_iceberg(con)
    con.execute(f"ATTACH 'fluxgate' AS lake (TYPE iceberg, ENDPOINT '{lake_server.catalog_uri}', "
                "AUTHORIZATION_TYPE 'none')")
    yield con
    con.close()


def load_iceberg(con):
    """Loads the iceberg extension, and those it needs, from their PyPI packages' files."""
    for name in ("httpfs", "avro", "iceberg"):
        package = pathlib.Path(importlib.import_module(f"duckdb_extension_{name}").__path__[0])
        con.execute(f"LOAD '{next(package.rglob(f'{name}.duckdb_extension'))}'")


def rows(table, names):
    """A table's rows in `names` order by __offset, timestamps as microseconds, so readers compare exactly."""
    cols = {}
    for n in names:
        col = table[n]
        cols[n] = pc.cast(col, pa.int64()) if pa.types.is_timestamp(col.type) else col
    return pa.table(cols).sort_by("__offset").to_pylist()


def lake_rows(client, table):
    lake, _ = read(client, path(table + "$lake"))
    return lake.schema.names, rows(lake, lake.schema.names)


def log_table(client):
    """A log table with two tiered rounds and a column added between them."""
    table = f"fluss.{unique('events')}"
    create_table(client, table, {"user": "STRING", "n": "BIGINT"}, {"table.datalake.enabled": "true"})
    put(client, path(table), pa.record_batch({"user": ["ann", "bob"], "n": pa.array([1, 2], pa.int64())}))
    action(client, "tier-now", {"table": table})
    action(client, "alter-table", {"table": table, "add_columns": [{"name": "country", "type": "STRING"}]})
    put(client, path(table), pa.record_batch({"user": ["cid"], "n": pa.array([3], pa.int64()), "country": ["NL"]}))
    action(client, "tier-now", {"table": table})
    return table


def pk_table(client, changes):
    """A primary-key table with inserts, then (with changes) an update and a delete, each tiered."""
    table = f"fluss.{unique('users')}"
    create_table(client, table, {"id": {"type": "BIGINT", "nullable": False}, "name": "STRING"},
                 {"table.datalake.enabled": "true"}, primary_key=["id"])
    put(client, path(table), pa.record_batch({"id": pa.array([1, 2, 3], pa.int64()), "name": ["ann", "bob", "cid"]}))
    action(client, "tier-now", {"table": table})
    if changes:
        put(client, path(table), pa.record_batch({"id": pa.array([1], pa.int64()), "name": ["anne"]}))
        put(client, command({"write": {"table": table, "mode": "delete"}}),
            pa.record_batch({"id": pa.array([2], pa.int64()), "name": pa.array([None], pa.string())}))
        action(client, "tier-now", {"table": table})
    return table


# Primary-key tables retire updated and deleted rows with position deletes, which every reader applies.
ALL_KINDS = ["log", "pk-inserts", "pk-changes"]


@pytest.fixture(scope="module")
def tables(lake_client):
    return {"log": log_table(lake_client), "pk-inserts": pk_table(lake_client, False),
            "pk-changes": pk_table(lake_client, True)}


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_pyiceberg_rest_catalog(lake_client, rest, tables, kind):
    table = tables[kind]
    names, want = lake_rows(lake_client, table)
    iceberg = rest.load_table(table)
    assert rows(iceberg.scan().to_arrow(), names) == want
    snap = action(lake_client, "lake-snapshot", {"table": table})
    assert iceberg.current_snapshot().snapshot_id == snap["snapshot_id"]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_pyiceberg_metadata_file(lake_client, rest, tables, kind):
    table = tables[kind]
    names, want = lake_rows(lake_client, table)
    iceberg = StaticTable.from_metadata(rest.load_table(table).metadata_location)
    assert rows(iceberg.scan().to_arrow(), names) == want


def test_pyiceberg_rest_catalog_lists_the_lake(lake_client, rest, tables):
    assert ("fluss",) in rest.list_namespaces()
    listed = {".".join(ident) for ident in rest.list_tables("fluss")}
    assert set(tables.values()) <= listed
    assert rest.table_exists(tables["log"]) and not rest.table_exists(f"fluss.{unique('missing')}")


def test_rest_catalog_refuses_writes(lake_server, rest, tables):
    # The config announces no writes, so clients do not send them; a write sent anyway is the spec's refusal.
    with pytest.raises(NotImplementedError, match="POST /v1/{prefix}/namespaces"):
        rest.create_namespace(unique("db"))
    req = urllib.request.Request(f"{lake_server.catalog_uri}/v1/namespaces/fluss/tables/{tables['log'].split('.')[1]}",
                                 method="DELETE")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert refused.value.code == 406
    error = json.loads(refused.value.read())["error"]
    assert error["type"] == "UnsupportedOperationException" and error["code"] == 406
    assert "only writer of its lake" in error["message"]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_duckdb_iceberg_scan(lake_client, rest, duck, tables, kind):
    table = tables[kind]
    names, want = lake_rows(lake_client, table)
    location = rest.load_table(table).metadata_location
    assert rows(duck.sql(f"SELECT * FROM iceberg_scan('{location}')").to_arrow_table(), names) == want


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_duckdb_rest_catalog(lake_client, duck, tables, kind):
    table = tables[kind]
    names, want = lake_rows(lake_client, table)
    assert rows(duck.sql(f"SELECT * FROM lake.{table}").to_arrow_table(), names) == want


def test_pk_lake_is_the_current_rows(lake_client, duck, tables):
    """The lake of a primary-key table after an update and a delete holds each live key's latest row."""
    got = duck.sql(f"SELECT id, name FROM lake.{tables['pk-changes']} ORDER BY id").fetchall()
    assert got == [(1, "anne"), (3, "cid")]


def test_sql_lake_catalog_without_warehouse(tmp_path):
    """--lake-catalog alone (SQLite) keeps the lake in <data>/lake with file:// paths, which the readers read."""
    http = f"127.0.0.1:{free_port()}"
    catalog = f"type=sql,uri=file:{tmp_path / 'lake.db'},sql.driver=sqlite,sql.dialect=sqlite"
    with Server(tmp_path / "data", ["--http", http, "--lake-catalog", catalog]) as srv:
        client = fl.connect(srv.address)
        try:
            table = log_table(client)
            names, want = lake_rows(client, table)
        finally:
            client.close()
        iceberg = RestCatalog("fluxgate", uri=f"http://{http}/iceberg").load_table(table)
        assert iceberg.metadata_location.startswith(f"file://{tmp_path / 'data' / 'lake'}/")
        assert iceberg.location().startswith("file://")
        assert rows(iceberg.scan().to_arrow(), names) == want
        con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
        try:
            load_iceberg(con)
            got = con.sql(f"SELECT * FROM iceberg_scan('{iceberg.metadata_location}')").to_arrow_table()
        finally:
            con.close()
        assert rows(got, names) == want


def test_reads_right_after_alter_before_a_round(lake_client, rest, duck):
    """alter-table adds a column; before any round, Flight and every reader read the lake with it as NULL."""
    table = f"fluss.{unique('altered')}"
    create_table(lake_client, table, {"user": "STRING"}, {"table.datalake.enabled": "true"})
    put(lake_client, path(table), pa.record_batch({"user": ["ann"]}))
    action(lake_client, "tier-now", {"table": table})
    action(lake_client, "alter-table", {"table": table, "add_columns": [{"name": "country", "type": "STRING"}]})

    union, _ = read(lake_client, path(table))
    assert union.to_pylist() == [{"user": "ann", "country": None}]
    names, want = lake_rows(lake_client, table)
    assert names[:2] == ["user", "country"] and want[0]["country"] is None
    assert rows(rest.load_table(table).scan().to_arrow(), names) == want
    assert rows(duck.sql(f"SELECT * FROM lake.{table}").to_arrow_table(), names) == want


def test_rest_catalog_with_users_over_https(tmp_path, secured, monkeypatch):
    """With users and TLS the catalog is HTTPS and takes Flight's tokens and passwords; grants decide what is seen."""
    # requests lets these variables win over the session's CA bundle, which pyiceberg's ssl.cabundle sets.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    http = f"127.0.0.1:{free_port()}"
    with Server(tmp_path / "data", [*secured.server_args(), "--http", http], tls=True) as srv:
        client = fl.connect(srv.address, tls_root_certs=secured.ca.read_bytes())
        try:
            header = client.authenticate_basic_token("ann", secured.users["ann"])
            ann = fl.FlightCallOptions(headers=[header])
            table = f"fluss.{unique('secret')}"
            create_table_as(client, ann, table)
            token = header[1].decode().removeprefix("Bearer ")
        finally:
            client.close()
        uri, tls = f"https://{http}/iceberg", {"ssl": {"cabundle": str(secured.ca)}}
        as_ann = RestCatalog("fluxgate", uri=uri, token=token, **tls)
        assert rows(as_ann.load_table(table).scan().to_arrow(), ["user", "__offset"]) == [{"user": "ann", "__offset": 0}]
        as_bob = RestCatalog("fluxgate", uri=uri, auth={"type": "basic", "basic": {
            "username": "bob", "password": secured.users["bob"]}}, **tls)
        assert as_bob.list_namespaces() == []
        from pyiceberg.exceptions import ForbiddenError, UnauthorizedError
        with pytest.raises(ForbiddenError, match="bob may not read"):
            as_bob.load_table(table)
        with pytest.raises(UnauthorizedError):
            RestCatalog("fluxgate", uri=uri, **tls)


def create_table_as(client, options, table):
    """A lake-enabled log table with one tiered row, made by the caller of `options`."""
    body = {"table": table, "columns": [{"name": "user", "type": "STRING"}],
            "options": {"table.datalake.enabled": "true"}}
    list(client.do_action(fl.Action("create-table", json.dumps(body).encode()), options=options))
    put(client, path(table), pa.record_batch({"user": ["ann"]}), options=options)
    list(client.do_action(fl.Action("tier-now", json.dumps({"table": table}).encode()), options=options))


def test_partitioned_table_spec_and_pruning(lake_client, rest, duck):
    """A day-partitioned table's Iceberg spec is identity(dt) then the bucket, dt keeping its DATE type; a filter
    on dt plans only that day's files, in pyiceberg as in `t$lake`, and every reader reads what `t$lake` reads."""
    table = f"fluss.{unique('days')}"
    create_table(lake_client, table, {"dt": {"type": "DATE", "nullable": False}, "n": "BIGINT"},
                 {"table.datalake.enabled": "true", "bucket.num": "2"}, partition_keys=["dt"])
    days = [datetime.date(2026, 12, d) for d in (1, 2, 3)]
    put(lake_client, path(table), pa.record_batch({
        "dt": pa.array([d for d in days for _ in range(4)], pa.date32()), "n": pa.array(range(12), pa.int64())}))
    snap = action(lake_client, "tier-now", {"table": table})
    assert sorted(snap["partition_offsets"]) == [d.isoformat() for d in days] and "offsets" not in snap

    iceberg = rest.load_table(table)
    spec = iceberg.spec()
    assert [(f.name, str(f.transform)) for f in spec.fields] == [("dt", "identity"), ("__bucket", "identity")]
    assert str(iceberg.schema().find_field("dt").field_type) == "date"

    every_file = list(iceberg.scan().plan_files())
    one_day = list(iceberg.scan(row_filter=EqualTo("dt", days[1].isoformat())).plan_files())
    assert 0 < len(one_day) < len(every_file)
    assert len(every_file) == len({(t.file.partition[0], t.file.partition[1]) for t in every_file})
    assert {t.file.partition[0] for t in one_day} == {(days[1] - datetime.date(1970, 1, 1)).days}

    # Offsets count per partition and bucket, so rows are compared in that order.
    def placed(table_):
        return sorted(rows(table_, names), key=lambda r: (r["dt"], r["__bucket"], r["__offset"]))

    lake, _ = read(lake_client, path(table + "$lake"))
    names = lake.schema.names
    want = placed(lake)
    assert placed(iceberg.scan().to_arrow()) == want
    assert placed(duck.sql(f"SELECT * FROM lake.{table}").to_arrow_table()) == want
    day_rows = [r for r in want if r["dt"] == days[1]]
    assert len(day_rows) == 4
    assert placed(iceberg.scan(row_filter=EqualTo("dt", days[1].isoformat())).to_arrow()) == day_rows
    assert placed(scan(lake_client, table=table + "$lake", filter={"eq": ["dt", days[1].isoformat()]})) == day_rows
