"""The package's write: every kind of data, cast to the table's types; modes, idempotence, batches, undo."""

import datetime

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from fluxgate._write import write_options
from flux import unique


@pytest.fixture
def events(fg):
    table = f"fluss.{unique('events')}"
    fg.create_table(table, {"id": "INT NOT NULL", "name": "STRING", "ts": "TIMESTAMP_LTZ(3)"})
    return table


T0 = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("kind", ["table", "batch", "reader", "pandas", "polars", "dict", "rows"])
def test_write_takes_every_kind_of_data(fg, events, kind):
    ids, names, stamps = [1, 2], ["ann", None], [T0, T0 + datetime.timedelta(seconds=1)]
    columns = {"id": ids, "name": names, "ts": stamps}
    data = {
        "table": lambda: pa.table(columns),  # int64, timestamp[us]: cast to INT and TIMESTAMP_LTZ(3)
        "batch": lambda: pa.record_batch(columns),
        "reader": lambda: pa.RecordBatchReader.from_batches(pa.table(columns).schema, pa.table(columns).to_batches()),
        "pandas": lambda: pd.DataFrame(columns, index=[10, 20]),  # the index is not written
        "polars": lambda: pl.DataFrame(columns),
        "dict": lambda: columns,
        "rows": lambda: [{"id": i, "name": n, "ts": t} for i, n, t in zip(ids, names, stamps)],
    }[kind]()
    result = fg.write(events, data)
    assert (result.rows, result.batches, result.offsets) == (2, 1, {0: 2})
    assert fg.to_arrow(events).to_pylist() == [{"id": 1, "name": "ann", "ts": T0},
                                               {"id": 2, "name": None, "ts": T0 + datetime.timedelta(seconds=1)}]


def test_write_casts_safely(fg, events):
    with pytest.raises(pa.ArrowInvalid, match="not in range"):
        fg.write(events, {"id": [2**40], "name": ["x"], "ts": [T0]})
    with pytest.raises(pa.ArrowInvalid, match="would lose data"):  # microseconds into TIMESTAMP_LTZ(3)
        fg.write(events, {"id": [1], "name": ["x"], "ts": [T0 + datetime.timedelta(microseconds=1)]})
    assert fg.to_arrow(events).num_rows == 0


def test_write_raises_the_servers_error(fg, events):
    with pytest.raises(pa.ArrowInvalid, match="invalid argument.*nope"):
        fg.write(events, {"id": [1], "name": ["x"], "ts": [T0], "nope": [1]})
    with pytest.raises(pa.ArrowInvalid, match="precondition failed"):
        fg.write(events, {"id": [1], "name": ["x"], "ts": [T0]}, mode="upsert")


def test_large_data_goes_as_several_batches(fg, events):
    n = 10_000
    result = fg.write(events, {"id": list(range(n)), "name": ["x" * 20] * n, "ts": [T0] * n},
                      max_batch_bytes=64 << 10)
    assert result.rows == n and result.batches > 4 and result.sequence == result.batches - 1
    assert fg.table_stats(events)["row_count"] == n


def test_writer_keeps_one_stream(fg, events):
    with fg.writer(events) as writer:
        first = writer.write({"id": [1], "name": ["a"], "ts": [T0]})
        second = writer.write(pd.DataFrame({"id": [2], "name": ["b"], "ts": [T0]}))
        assert (first.sequence, second.sequence) == (0, 1)  # one stream counts its batches
        with pytest.raises(ValueError, match="sends the columns"):
            writer.write({"id": [3], "name": ["c"]})
    assert fg.table_stats(events)["row_count"] == 2


def test_idempotent_writer_applies_a_retry_once(fg, events):
    batch = {"id": [1, 2], "name": ["a", "b"], "ts": [T0, T0]}
    first = fg.write(events, batch, writer_id="w1", first_sequence=0)
    retry = fg.write(events, batch, writer_id="w1", first_sequence=0)
    assert retry.offsets == first.offsets and fg.table_stats(events)["row_count"] == 2
    assert fg.action("writer-state", {"table": events, "writer_id": "w1"}) == {"next_sequence": 1}


def test_upsert_partial_delete_changelog_and_undo(fg):
    table = f"fluss.{unique('users')}"
    fg.create_table(table, {"id": "BIGINT", "name": "STRING", "score": "INT"}, primary_key=["id"])
    checkpoint = fg.write(table, {"id": [1, 2, 3], "name": ["ann", "bob", "cid"], "score": [1, 2, 3]}).offsets
    fg.write(table, {"id": [2], "score": [20]}, columns=["id", "score"])
    fg.write(table, {"id": [3]}, mode="delete")
    fg.write(table, {"_change_type": ["insert", "delete"], "id": [4, 1], "name": ["dan", None], "score": [4, None]},
             mode="changelog")
    assert fg.to_arrow(table).sort_by("id").to_pylist() == [{"id": 2, "name": "bob", "score": 20},
                                                            {"id": 4, "name": "dan", "score": 4}]
    undone = fg.undo(table, checkpoint)
    assert undone["undone_keys"] == 4
    assert fg.to_arrow(table).sort_by("id").to_pylist() == [{"id": 1, "name": "ann", "score": 1},
                                                            {"id": 2, "name": "bob", "score": 2},
                                                            {"id": 3, "name": "cid", "score": 3}]


def test_partitioned_write_offsets_create_partitions_and_undo(fg):
    table = f"fluss.{unique('visits')}"
    fg.create_table(table, {"id": "BIGINT", "dt": "STRING NOT NULL", "page": "STRING"}, primary_key=["id", "dt"],
                    partition_keys=["dt"])
    checkpoint = fg.write(table, {"id": [1, 2, 3], "dt": ["20261201", "20261202", "20261202"],
                                  "page": ["a", "b", "c"]}).offsets
    assert checkpoint == {"20261201": {0: 1}, "20261202": {0: 2}}
    with pytest.raises(KeyError, match="20261203"):
        fg.write(table, {"id": [4], "dt": ["20261203"], "page": ["d"]}, create_partitions=False)
    fg.write(table, {"id": [1, 2], "dt": ["20261201", "20261202"], "page": ["x", "y"]})
    assert fg.undo(table, {"20261202": checkpoint["20261202"]})["undone_keys"] == 1
    assert fg.to_arrow(table).sort_by("id").column("page").to_pylist() == ["x", "b", "c"]


@pytest.mark.parametrize("codec,level", [("zstd", "1"), ("zstd", "9"), ("lz4_frame", None), ("none", None)])
def test_log_tables_get_batches_compressed_as_they_store_them(fg, codec, level):
    table = f"fluss.{unique('logs')}"
    options = {"table.log.arrow.compression.type": codec}
    if level:
        options["table.log.arrow.compression.zstd.level"] = level
    info = fg.create_table(table, {"id": "BIGINT", "v": "STRING"}, options=options)
    sent = write_options(info)
    if codec == "none":
        assert sent is None
    else:
        assert sent.compression == ("lz4" if codec == "lz4_frame" else "zstd")
    fg.write(table, {"id": list(range(100)), "v": ["abc"] * 100})
    assert fg.to_arrow(table)["id"].to_pylist() == list(range(100))


def test_primary_key_tables_get_batches_uncompressed(fg):
    info = fg.create_table(f"fluss.{unique('pk')}", {"id": "BIGINT"}, primary_key=["id"])
    assert info["options"]["table.log.arrow.compression.type"] == "zstd" and write_options(info) is None
