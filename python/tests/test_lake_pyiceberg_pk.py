"""pyiceberg reads a primary-key table's lake after updates and deletes: position deletes, which it applies."""

from pathlib import Path

import pyarrow as pa
from pyiceberg.table import StaticTable

from flux import action, command, create_table, path, put, read, scan, unique


def rows(ids, names):
    return pa.record_batch({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string())})


def delete(client, table, ids):
    put(client, command({"write": {"table": table, "mode": "delete"}}), rows(ids, [None] * len(ids)))


def iceberg_rows(server, name):
    """The lake table as pyiceberg reads it from its current metadata file, sorted by id."""
    iceberg = StaticTable.from_metadata(str(Path(server.data) / "lake" / "fluss" / name))
    return iceberg, iceberg.scan(selected_fields=("id", "name")).to_arrow().sort_by("id").to_pylist()


def test_pyiceberg_reads_a_primary_key_table_after_updates_and_deletes(client, server):
    name = unique("users")
    table = f"fluss.{name}"
    create_table(client, table, {"id": "BIGINT", "name": "STRING"},
                 {"bucket.num": "2", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"},
                 primary_key=["id"])
    put(client, path(table), rows(list(range(20)), [f"v{i}" for i in range(20)]))
    action(client, "tier-now", {"table": table})
    for r in range(3):
        ids = list(range(r, 20, 4))
        put(client, path(table), rows(ids, [f"r{r}-{i}" for i in ids]))
        put(client, path(table), rows(ids[:2], [f"r{r}-again-{i}" for i in ids[:2]]))  # twice in one round
        delete(client, table, [19 - r])
        action(client, "tier-now", {"table": table})

        current = scan(client, table=table).sort_by("id").to_pylist()
        iceberg, got = iceberg_rows(server, name)
        assert got == current
        lake, _ = read(client, path(table + "$lake"))
        assert lake.select(["id", "name"]).sort_by("id").to_pylist() == current

    assert set(iceberg.inspect.delete_files()["content"].to_pylist()) == {1}  # position deletes only

    compacted = action(client, "compact-lake", {"table": table})
    assert compacted["removed_delete_files"] > 0
    iceberg, got = iceberg_rows(server, name)
    assert iceberg.current_snapshot().snapshot_id == compacted["snapshot_id"]
    assert got == scan(client, table=table).sort_by("id").to_pylist()
    assert len(iceberg.inspect.data_files()) == 2  # one per bucket
    assert len(iceberg.inspect.delete_files()) == 0
