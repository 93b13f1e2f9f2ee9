"""table-stats: a table's row count without reading its rows, as a pyarrow user asks for it."""

import pyarrow as pa
import pytest

from flux import action, command, create_table, put, scan, unique

KEYED = {"id": {"type": "BIGINT", "nullable": False}, "name": "STRING"}


def rows(ids):
    return pa.record_batch({"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i}" for i in ids], pa.string())})


def test_primary_key_table_counts_its_current_rows(client):
    table = f"fluss.{unique('keyed')}"
    create_table(client, table, KEYED, {"bucket.num": "3"}, primary_key=["id"])
    put(client, command({"write": {"table": table}}), rows(range(10)), rows(range(5, 15)))
    keys = pa.record_batch({"id": pa.array([0, 1, 2, 99], pa.int64())})
    put(client, command({"write": {"table": table, "mode": "delete"}}), keys)

    stats = action(client, "table-stats", {"table": table})
    assert stats["row_count"] == 12 == scan(client, table=table).num_rows
    assert sorted(stats["buckets"]) == ["0", "1", "2"] and sum(stats["buckets"].values()) == 12


def test_log_table_counts_its_retained_rows(client):
    table = f"fluss.{unique('log')}"
    create_table(client, table, {"id": "BIGINT"}, {"bucket.num": "2"})
    put(client, command({"write": {"table": table}}), pa.record_batch({"id": pa.array(range(7), pa.int64())}))
    assert action(client, "table-stats", {"table": table})["row_count"] == 7


def test_wal_image_table_keeps_no_count(client):
    table = f"fluss.{unique('wal')}"
    create_table(client, table, KEYED, {"table.changelog.image": "wal"}, primary_key=["id"])
    with pytest.raises(pa.ArrowInvalid, match="precondition failed.*keeps no row count"):
        action(client, "table-stats", {"table": table})
