"""Databases and tables: create, describe, list, alter, drop, through actions and ListFlights/GetSchema."""

import json

import pyarrow as pa
import pytest

from flux import action, create_table, path, unique


def test_list_actions_names_every_action(client):
    names = {a.type for a in client.list_actions()}
    assert {"create-database", "drop-database", "list-databases", "create-table", "drop-table", "describe-table",
            "list-tables", "alter-table", "list-offsets", "lake-snapshot", "tier-now", "undo", "grant", "revoke",
            "list-grants"} <= names


def test_databases(client):
    db = unique("db")
    assert action(client, "create-database", {"database": db}) == {"database": db}
    assert db in action(client, "list-databases", {})["databases"]
    assert action(client, "create-database", {"database": db, "if_not_exists": True}) == {"database": db}
    assert action(client, "drop-database", {"database": db}) == {}
    assert db not in action(client, "list-databases", {})["databases"]
    assert action(client, "drop-database", {"database": db, "if_exists": True}) == {}


def test_tables(client):
    db = unique("db")
    action(client, "create-database", {"database": db})
    table = f"{db}.orders"
    info = create_table(client, table, {"id": {"type": "BIGINT", "nullable": False}, "amount": "DECIMAL(10,2)"},
                        {"bucket.num": "3"}, comment="orders")
    assert info["kind"] == "log" and info["options"]["bucket.num"] == "3"
    assert info["options"]["table.log.arrow.compression.type"] == "zstd"
    assert action(client, "describe-table", {"table": table}) == info
    assert [t["table"] for t in action(client, "list-tables", {"database": db})["tables"]] == [table]

    flights = list(client.list_flights(db.encode()))
    assert [f.descriptor.path for f in flights] == [[db.encode(), b"orders"]]
    schema = client.get_schema(path(table)).schema
    assert schema == pa.schema([pa.field("id", pa.int64(), nullable=False), ("amount", pa.decimal128(10, 2))])

    altered = action(client, "alter-table", {"table": table, "add_columns": [{"name": "note", "type": "STRING"}]})
    assert altered["schema_id"] == info["schema_id"] + 1
    assert client.get_schema(path(table)).schema.names == ["id", "amount", "note"]

    with pytest.raises(pa.ArrowInvalid, match="not empty|cascade"):
        action(client, "drop-database", {"database": db})
    assert action(client, "drop-table", {"table": table}) == {}
    assert action(client, "list-tables", {"database": db})["tables"] == []
    assert action(client, "drop-database", {"database": db, "cascade": True}) == {}


def test_primary_key_table_describes_its_indexes(client):
    table = f"fluss.{unique()}"
    info = create_table(client, table, {"k": "STRING", "s": "BIGINT", "v": "STRING"}, {"bucket.key": "k"},
                        primary_key=["k", "s"])
    assert info["kind"] == "primary_key"
    assert info["indexes"] == [{"name": "primary_key", "columns": ["k", "s"]}, {"name": "prefix", "columns": ["k"]}]
    assert info["options"]["table.delete.behavior"] == "allow"
    assert json.loads(client.get_flight_info(path(table)).app_metadata)["table_id"] == info["table_id"]
