"""A write through the served Iceberg REST catalog is refused before it writes a file into fluxgate's lake: the served
metadata names write locations no file system has (PROTOCOL.md §7.6), since clients check the catalog's endpoints only
when they commit, after writing their files."""

import pyarrow as pa
import pytest

from flux import action, create_table, path, put, unique
from test_lake_readers import lake_client, lake_server, rest  # noqa: F401 (fixtures)


def files_under(directory):
    return sorted(p for p in directory.rglob("*") if p.is_file())


def test_pyiceberg_append_writes_nothing(lake_server, lake_client, rest):
    table = f"fluss.{unique('refused')}"
    create_table(lake_client, table, {"user": "STRING"}, {"table.datalake.enabled": "true"})
    put(lake_client, path(table), pa.record_batch({"user": ["ann"]}))
    action(lake_client, "tier-now", {"table": table})
    location = lake_server.data / "lake" / "fluss" / table.split(".")[1]
    before = files_under(location)
    assert before, f"no lake files under {location}"

    iceberg = rest.load_table(table)
    assert iceberg.properties["write.data.path"].startswith("fluxgate-read-only://")
    with pytest.raises(Exception, match="fluxgate-read-only"):
        iceberg.append(pa.table({"user": ["bob"], "__bucket": pa.array([0], pa.int32()),
                                 "__offset": pa.array([1], pa.int64()),
                                 "__timestamp": pa.array([0], pa.timestamp("us", "UTC"))},
                                schema=iceberg.schema().as_arrow()))
    assert files_under(location) == before
