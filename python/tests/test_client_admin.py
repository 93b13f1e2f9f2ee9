"""The package's connect and its admin calls: addresses, databases, tables, partitions, offsets, stats, the lake."""

import datetime

import pyarrow as pa
import pytest

import fluxgate
from fluxgate._address import flight_location
from flux import unique


@pytest.mark.parametrize("addr,tls,want", [
    ("127.0.0.1:8815", False, "grpc+tcp://127.0.0.1:8815"),
    ("grpc://127.0.0.1:8815", False, "grpc+tcp://127.0.0.1:8815"),
    ("grpc+tcp://db:1/", False, "grpc+tcp://db:1"),
    ("grpc+tls://db.example.com:8815", False, "grpc+tls://db.example.com:8815"),
    ("db.example.com:8815", True, "grpc+tls://db.example.com:8815"),
    ("grpc+tls://db:8815", True, "grpc+tls://db:8815"),
])
def test_address_forms(addr, tls, want):
    assert flight_location(addr, tls) == want


@pytest.mark.parametrize("addr,tls,message", [
    ("http://db:8815", False, "want host:port"),
    ("db", False, "want host:port"),
    ("grpc://db:1/x", False, "want host:port"),
    ("grpc://db:8815", True, "plain gRPC but TLS options were given"),
])
def test_bad_addresses(addr, tls, message):
    with pytest.raises(ValueError, match=message):
        flight_location(addr, tls)


@pytest.mark.parametrize("form", ["bare", "scheme"])
def test_connect_takes_fluxgate_addr_in_either_form(server, monkeypatch, form):
    host_port = server.address.removeprefix("grpc://")
    monkeypatch.setenv("FLUXGATE_ADDR", host_port if form == "bare" else server.address)
    with fluxgate.connect() as fg:
        assert "fluss" in fg.list_databases()


def test_databases(fg):
    db = unique("db")
    fg.create_database(db)
    fg.create_database(db, if_not_exists=True)
    with pytest.raises(pa.ArrowException, match="already exists"):
        fg.create_database(db)
    assert db in fg.list_databases()
    fg.create_table(f"{db}.t", {"id": "BIGINT"})
    with pytest.raises(pa.ArrowInvalid):
        fg.drop_database(db)  # it has a table: only with cascade
    fg.drop_database(db, cascade=True)
    assert db not in fg.list_databases()
    fg.drop_database(db, if_exists=True)


def test_create_describe_alter_list_drop_table(fg):
    db = unique("db")
    fg.create_database(db)
    table = f"{db}.orders"
    info = fg.create_table(table, {"id": "BIGINT NOT NULL", "amount": "DECIMAL(10,2)",
                                   "note": {"type": "STRING", "comment": "free text"}},
                           options={"bucket.num": 2, "table.datalake.enabled": False}, comment="orders")
    assert info["columns"] == [{"name": "id", "type": "BIGINT", "nullable": False},
                               {"name": "amount", "type": "DECIMAL(10,2)", "nullable": True},
                               {"name": "note", "type": "STRING", "nullable": True, "comment": "free text"}]
    assert info["kind"] == "log" and info["comment"] == "orders"
    assert info["options"]["bucket.num"] == "2" and info["options"]["table.datalake.enabled"] == "false"
    assert fg.create_table(table, [{"name": "id", "type": "BIGINT"}], if_not_exists=True)["table_id"] == info["table_id"]
    assert fg.describe_table(table) == info

    altered = fg.alter_table(table, set_options={"table.log.ttl": "2d"}, add_columns={"country": "STRING"})
    assert altered["options"]["table.log.ttl"] == "2d" and altered["columns"][-1]["name"] == "country"
    assert altered["schema_id"] == info["schema_id"] + 1
    assert fg.alter_table(table, reset_options=["table.log.ttl"])["options"]["table.log.ttl"] == "7d"

    pk = fg.create_table(f"{db}.users", {"id": "BIGINT", "name": "STRING"}, primary_key=["id"])
    assert pk["kind"] == "primary_key" and pk["primary_key"] == ["id"]
    assert [t["table"] for t in fg.list_tables(db)] == [table, f"{db}.users"]
    assert {table, f"{db}.users"} <= {t["table"] for t in fg.list_tables()}

    fg.drop_table(table)
    fg.drop_table(table, if_exists=True)
    with pytest.raises(KeyError, match=table.replace(".", r"\.")):
        fg.describe_table(table)


def test_list_tables_follows_pages(fg, monkeypatch):
    db = unique("db")
    fg.create_database(db)
    for i in range(5):
        fg.create_table(f"{db}.t{i}", {"id": "BIGINT"})
    pages = []
    action = fg.action

    def one_per_page(name, body):
        pages.append(body.get("page_token"))
        return action(name, {**body, "max_results": 2})

    monkeypatch.setattr(fg, "action", one_per_page)
    assert [t["table"] for t in fg.list_tables(db)] == [f"{db}.t{i}" for i in range(5)]
    assert len(pages) == 3 and pages[0] is None


def test_partitions(fg):
    table = f"fluss.{unique('visits')}"
    fg.create_table(table, {"id": "BIGINT", "dt": "STRING NOT NULL"}, partition_keys=["dt"])
    made = fg.create_partition(table, {"dt": "20261201"})
    assert made["partition_name"] == "20261201" and made["spec"] == {"dt": "20261201"}
    fg.create_partition(table, {"dt": "20261201"}, if_not_exists=True)
    fg.write(table, {"id": [1, 2], "dt": ["20261202", "20261203"]})  # a write makes its partitions
    assert [p["partition_name"] for p in fg.list_partitions(table)] == ["20261201", "20261202", "20261203"]
    assert [p["partition_name"] for p in fg.list_partitions(table, {"dt": "20261202"})] == ["20261202"]
    fg.drop_partition(table, {"dt": "20261201"})
    fg.drop_partition(table, {"dt": "20261201"}, if_exists=True)
    assert [p["partition_name"] for p in fg.list_partitions(table)] == ["20261202", "20261203"]
    assert fg.list_offsets(table) == {"20261202": {0: 1}, "20261203": {0: 1}}
    assert fg.list_offsets(table, "earliest", partitions=["20261203"]) == {"20261203": {0: 0}}
    assert fg.table_stats(table, partitions=["20261202"])["row_count"] == 1


def test_offsets_and_stats(fg):
    table = f"fluss.{unique('events')}"
    fg.create_table(table, {"id": "BIGINT"}, options={"bucket.num": 2, "bucket.key": "id"})
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
    result = fg.write(table, {"id": [1, 2, 3, 4]})
    assert fg.list_offsets(table) == result.offsets and sum(result.offsets.values()) == 4
    assert fg.list_offsets(table, "earliest") == {0: 0, 1: 0}
    assert fg.list_offsets(table, before) == {0: 0, 1: 0}
    assert fg.list_offsets(table, buckets=[1]) == {1: result.offsets[1]}
    stats = fg.table_stats(table)
    assert stats["row_count"] == 4 and sum(stats["buckets"].values()) == 4


def test_lake_calls(fg):
    table = f"fluss.{unique('clicks')}"
    fg.create_table(table, {"user": "STRING"}, options={"table.datalake.enabled": True})
    with pytest.raises(KeyError):
        fg.lake_snapshot(table)  # before the first round
    fg.write(table, {"user": ["ann", "bob"]})
    snap = fg.tier_now(table)
    assert snap["offsets"] == {"0": 2}
    assert fg.lake_snapshot(table)["snapshot_id"] == snap["snapshot_id"]
    assert "rewritten_files" in fg.compact_lake(table)
    assert fg.to_arrow(table + "$lake", columns=["user", "__offset"]).sort_by("__offset").to_pylist() == [
        {"user": "ann", "__offset": 0}, {"user": "bob", "__offset": 1}]


def test_action_runs_any_action(fg):
    assert "fluss" in fg.action("list-databases", {})["databases"]
    with pytest.raises(pa.ArrowInvalid, match="tabel"):
        fg.action("describe-table", {"tabel": "x"})
