"""Every partition key type fluxgate allows tiers into files that pyiceberg and DuckDB find: the paths the manifests
name are the files' real URIs (Iceberg escapes a partition value's ':' and '+' in its directory name; iceberg-go's
local file system writes the directory unescaped, so the lake records it unescaped), and every reader reads what
`t$lake` reads over Flight.
"""

import datetime
import pathlib

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyiceberg.table import StaticTable

from flux import action, create_table, path, put, read, unique
from test_lake_readers import duck, lake_client, lake_server, rest  # noqa: F401 (fixtures)

UTC = datetime.timezone.utc

# (type, its two values as pyarrow writes them): values whose Iceberg partition path needs escapes where it can.
KEY_TYPES = [
    ("STRING", pa.array(["eu-west_1", "Z9"], pa.string())),
    ("CHAR(3)", pa.array(["abc", "xyz"], pa.string())),
    ("VARCHAR(8)", pa.array(["a-b", "c_d"], pa.string())),
    ("BOOLEAN", pa.array([True, False], pa.bool_())),
    # base64 "+/8=" and "AAc=": '+', '/' and '=' in the path.
    ("BYTES", pa.array([b"\xfb\xff", b"\x00\x07"], pa.binary())),
    ("BINARY(2)", pa.array([b"\xfb\xff", b"\x00\x07"], pa.binary())),
    ("VARBINARY(4)", pa.array([b"\xfb\xff", b"\x01"], pa.binary())),
    ("TINYINT", pa.array([-128, 7], pa.int8())),
    ("SMALLINT", pa.array([-1, 300], pa.int16())),
    ("INT", pa.array([-2147483648, 5], pa.int32())),
    ("BIGINT", pa.array([-1, 2**62], pa.int64())),
    ("FLOAT", pa.array([1e30, -2.5e-7], pa.float32())),  # 1e+30, -2.5e-07
    ("DOUBLE", pa.array([1e300, -2.5e-7], pa.float64())),
    ("DATE", pa.array([datetime.date(2026, 12, 1), datetime.date(1969, 12, 31)], pa.date32())),
    ("TIME(0)", pa.array([datetime.time(10, 0, 1), datetime.time(0, 0)], pa.time32("ms"))),
    ("TIME(3)", pa.array([datetime.time(10, 0, 0, 123000), datetime.time(23, 59, 59, 999000)], pa.time32("ms"))),
    ("TIME(6)", pa.array([datetime.time(10, 0, 0, 123456), datetime.time(1, 2, 3)], pa.time64("us"))),
    ("TIMESTAMP(3)", pa.array([datetime.datetime(2026, 12, 1, 10, 0, 0, 123000),
                               datetime.datetime(1969, 12, 31, 23, 59, 59)], pa.timestamp("ms"))),
    ("TIMESTAMP(6)", pa.array([datetime.datetime(2026, 12, 1, 10, 0, 0, 123456), datetime.datetime(2026, 12, 1)],
                              pa.timestamp("us"))),
    ("TIMESTAMP_LTZ(3)", pa.array([datetime.datetime(2026, 12, 1, 10, 0, tzinfo=UTC),
                                   datetime.datetime(2000, 1, 1, tzinfo=UTC)], pa.timestamp("ms", "UTC"))),
    ("TIMESTAMP_LTZ(6)", pa.array([datetime.datetime(2026, 12, 1, 10, 0, 0, 1, tzinfo=UTC),
                                   datetime.datetime(2000, 1, 1, tzinfo=UTC)], pa.timestamp("us", "UTC"))),
]


def canonical(table):
    """(n, k) pairs sorted by n, with k in one form whatever the reader's Arrow type for it."""
    k = table["k"]
    if pa.types.is_timestamp(k.type):
        k = pc.cast(pc.cast(k, pa.timestamp("us", k.type.tz)), pa.int64())
    elif pa.types.is_time(k.type):
        k = pc.cast(pc.cast(k, pa.time64("us")), pa.int64())
    elif pa.types.is_integer(k.type):
        k = pc.cast(k, pa.int64())
    elif pa.types.is_floating(k.type):
        k = pc.cast(k, pa.float64())
    elif pa.types.is_large_string(k.type) or pa.types.is_string_view(k.type):
        k = pc.cast(k, pa.string())
    elif pa.types.is_large_binary(k.type) or pa.types.is_binary_view(k.type) or pa.types.is_fixed_size_binary(k.type):
        k = pc.cast(k, pa.binary())
    return sorted(zip(pc.cast(table["n"], pa.int64()).to_pylist(), k.to_pylist()))


@pytest.fixture(scope="module")
def partitioned(lake_client):
    """One tiered lake table per partition key type, partitioned by k, two rows in two partitions."""
    tables = {}
    for typ, values in KEY_TYPES:
        table = f"fluss.{unique('keys')}"
        create_table(lake_client, table, {"k": {"type": typ, "nullable": False}, "n": "BIGINT"},
                     {"table.datalake.enabled": "true", "bucket.num": "1"}, partition_keys=["k"])
        put(lake_client, path(table), pa.record_batch({"k": values, "n": pa.array([0, 1], pa.int64())}))
        snap = action(lake_client, "tier-now", {"table": table})
        assert len(snap["partition_offsets"]) == 2, snap
        tables[typ] = table
    return tables


def want(lake_client, table):
    lake, _ = read(lake_client, path(table + "$lake"))
    got = canonical(lake)
    assert len(got) == 2
    return got


@pytest.mark.parametrize("typ", [t for t, _ in KEY_TYPES])
def test_pyiceberg_reads_every_partition_key_type(lake_client, rest, partitioned, typ):
    table = partitioned[typ]
    iceberg = rest.load_table(table)
    assert canonical(iceberg.scan().to_arrow()) == want(lake_client, table)
    static = StaticTable.from_metadata(iceberg.metadata_location)
    assert canonical(static.scan().to_arrow()) == want(lake_client, table)


@pytest.mark.parametrize("typ", [t for t, _ in KEY_TYPES])
def test_duckdb_reads_every_partition_key_type(lake_client, rest, duck, partitioned, typ):
    table = partitioned[typ]
    location = rest.load_table(table).metadata_location
    scanned = duck.sql(f"SELECT k, n FROM iceberg_scan('{location}')").to_arrow_table()
    assert canonical(scanned) == want(lake_client, table)
    assert canonical(duck.sql(f"SELECT k, n FROM lake.{table}").to_arrow_table()) == want(lake_client, table)


def test_manifest_paths_are_the_files(rest, partitioned):
    """Each data file the manifests name is where its URI says, read literally (no escapes are left to decode)."""
    for table in partitioned.values():
        for task in rest.load_table(table).scan().plan_files():
            uri = task.file.file_path
            assert uri.startswith("file://") and "%" not in uri, uri
            assert pathlib.Path(uri.removeprefix("file://")).is_file(), uri
