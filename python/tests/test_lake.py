"""The lake tier through pyarrow: tier-now, $lake, the union read, and pyiceberg reading the same rows."""

import json
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

from flux import action, create_table, path, put, read, unique


def test_lake_union_read_and_pyiceberg(client, server):
    name = unique("clicks")
    table = f"fluss.{name}"
    create_table(client, table, {"user": "STRING", "page": "STRING"}, {"table.datalake.enabled": "true"})
    with pytest.raises(KeyError, match="not found"):
        read(client, path(table + "$lake"))
    put(client, path(table), pa.record_batch({"user": ["ann", "bob"], "page": ["home", "docs"]}))
    snap = action(client, "tier-now", {"table": table})
    assert snap["offsets"] == {"0": 2}
    assert action(client, "lake-snapshot", {"table": table}) == snap
    put(client, path(table), pa.record_batch({"user": ["cid"], "page": ["blog"]}))

    lake, info = read(client, path(table + "$lake"))
    assert lake.schema.names == ["user", "page", "__bucket", "__offset", "__timestamp"]
    assert lake.schema.field("__timestamp").type == pa.timestamp("us", tz="UTC")
    assert sorted(lake["user"].to_pylist()) == ["ann", "bob"]

    union, info = read(client, path(table))
    assert json.loads(info.app_metadata)["lake_snapshot_id"] == snap["snapshot_id"]
    assert sorted(union["user"].to_pylist()) == ["ann", "bob", "cid"]

    iceberg = StaticTable.from_metadata(str(Path(server.data) / "lake" / "fluss" / name))
    assert iceberg.current_snapshot().snapshot_id == snap["snapshot_id"]
    assert iceberg.current_snapshot().summary["fluxgate.offsets"] == json.dumps({"0": 2}, separators=(",", ":"))
    assert iceberg.scan().to_arrow().sort_by("__offset").select(lake.schema.names).to_pylist() == \
        lake.sort_by("__offset").to_pylist()
