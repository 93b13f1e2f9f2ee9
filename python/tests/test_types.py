"""Every type of the type table (docs/PROTOCOL.md §2) round-trips: pyarrow → fluxgate → pyarrow, and through
pandas and polars and back into fluxgate, NULLs included."""

import datetime as dt
import decimal

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from flux import create_table, path, put, read, unique

UTC = dt.timezone.utc
TS = dt.datetime(2026, 11, 30, 12, 0, 0, 123456)

# type → (Arrow type on the wire, two non-null values)
TYPES = {
    "BOOLEAN": (pa.bool_(), [True, False]),
    "TINYINT": (pa.int8(), [-128, 127]),
    "SMALLINT": (pa.int16(), [-32768, 7]),
    "INT": (pa.int32(), [-(2**31), 2**31 - 1]),
    # pandas turns an integer column with NULLs into float64: values it holds exactly.
    "BIGINT": (pa.int64(), [-(2**62), 2**53]),
    "FLOAT": (pa.float32(), [1.5, float("-inf")]),
    "DOUBLE": (pa.float64(), [-0.25, 1e300]),
    "DECIMAL(10,2)": (pa.decimal128(10, 2), [decimal.Decimal("12345678.90"), decimal.Decimal("-0.01")]),
    "DECIMAL(38,10)": (pa.decimal128(38, 10), [decimal.Decimal("1234567890123456789012345678.0123456789"),
                                               decimal.Decimal("0")]),
    "STRING": (pa.string(), ["héllo", ""]),
    "VARCHAR(10)": (pa.string(), ["abc", "z"]),
    "CHAR(3)": (pa.string(), ["abc", "xyz"]),
    "BYTES": (pa.binary(), [b"\x00\xff", b""]),
    "VARBINARY(8)": (pa.binary(), [b"ab", b"c"]),
    "BINARY(2)": (pa.binary(), [b"ab", b"cd"]),
    "DATE": (pa.date32(), [dt.date(2026, 11, 30), dt.date(1970, 1, 1)]),
    "TIME(3)": (pa.time32("ms"), [dt.time(12, 0, 0, 123000), dt.time(0, 0)]),
    "TIME(6)": (pa.time64("us"), [dt.time(23, 59, 59, 999999), dt.time(0, 0)]),
    "TIME(9)": (pa.time64("ns"), [dt.time(1, 2, 3, 4), dt.time(0, 0)]),
    "TIMESTAMP(3)": (pa.timestamp("ms"), [TS.replace(microsecond=123000), dt.datetime(1969, 12, 31, 23, 59)]),
    "TIMESTAMP": (pa.timestamp("us"), [TS, dt.datetime(2000, 1, 1)]),
    "TIMESTAMP(9)": (pa.timestamp("ns"), [TS, dt.datetime(2000, 1, 1)]),
    "TIMESTAMP_LTZ(3)": (pa.timestamp("ms", tz="UTC"), [TS.replace(microsecond=123000, tzinfo=UTC),
                                                          dt.datetime(1999, 1, 1, tzinfo=UTC)]),
    "TIMESTAMP_LTZ": (pa.timestamp("us", tz="UTC"), [TS.replace(tzinfo=UTC), dt.datetime(1999, 1, 1, tzinfo=UTC)]),
    "TIMESTAMP_LTZ(9)": (pa.timestamp("ns", tz="UTC"), [TS.replace(tzinfo=UTC), dt.datetime(1999, 1, 1, tzinfo=UTC)]),
    "ARRAY<INT>": (pa.list_(pa.int32()), [[1, None, 3], []]),
    "MAP<STRING, BIGINT>": (pa.map_(pa.string(), pa.int64()), [[("a", 1), ("b", None)], []]),
    "ROW<a INT, b STRING>": (pa.struct([("a", pa.int32()), ("b", pa.string())]),
                             [{"a": 1, "b": "x"}, {"a": None, "b": None}]),
}


@pytest.fixture(scope="module")
def typed(client):
    """A table with a column of every type, and the rows written to it: values, NULLs, values."""
    table = f"fluss.{unique('types')}"
    columns = {"id": {"type": "INT", "nullable": False}} | {f"c{i}": t for i, t in enumerate(TYPES)}
    create_table(client, table, columns)
    arrays = {"id": pa.array([0, 1, 2], pa.int32())}
    for i, (arrow_type, (v0, v1)) in enumerate(TYPES.values()):
        arrays[f"c{i}"] = pa.array([v0, None, v1], arrow_type)
    rows = pa.Table.from_pydict(arrays)
    put(client, path(table), *rows.to_batches())
    return table, rows


def read_back(client, table, ids):
    got, _ = read(client, path(table))
    got = got.filter(pa.compute.is_in(got["id"], pa.array(ids, pa.int32()))).sort_by("id")
    return got.set_column(0, "id", pa.compute.subtract(got["id"], pa.scalar(ids[0], pa.int32())))


def test_schema_is_the_type_table(client, typed):
    table, rows = typed
    schema = client.get_schema(path(table)).schema
    for i, (sql, (arrow_type, _)) in enumerate(TYPES.items()):
        assert schema.field(f"c{i}").type == arrow_type, sql


def test_pyarrow_round_trip(client, typed):
    table, rows = typed
    got = read_back(client, table, [0, 1, 2])
    for name in rows.column_names:
        assert got[name].equals(rows[name]), f"{name}: {got[name]} != {rows[name]}"


def test_pandas_round_trip(client, typed):
    table, rows = typed
    schema = client.get_schema(path(table)).schema
    df = read_back(client, table, [0, 1, 2]).to_pandas()
    assert isinstance(df["c23"].dtype, pd.DatetimeTZDtype) and str(df["c23"].dtype.tz) == "UTC"
    assert df["c20"].dtype == "datetime64[us]"
    assert df.loc[1].drop("id").isna().all()
    df["id"] += 100
    put(client, path(table), *pa.Table.from_pandas(df, schema=schema, preserve_index=False).to_batches())
    got = read_back(client, table, [100, 101, 102])
    for name in rows.column_names:
        assert got[name].equals(rows[name]), f"{name}: {got[name]} != {rows[name]}"


def test_polars_round_trip(client, typed):
    table, rows = typed
    schema = client.get_schema(path(table)).schema
    df = pl.from_arrow(read_back(client, table, [0, 1, 2]))
    assert df["c23"].dtype == pl.Datetime("us", "UTC") and df["c20"].dtype == pl.Datetime("us")
    assert df["c7"].dtype == pl.Decimal(10, 2)
    assert df.row(1)[1:] == (None,) * len(TYPES)
    df = df.with_columns(pl.col("id") + 200)
    put(client, path(table), *df.to_arrow().cast(schema).to_batches())
    got = read_back(client, table, [200, 201, 202])
    for name in rows.column_names:
        assert got[name].equals(rows[name]), f"{name}: {got[name]} != {rows[name]}"
