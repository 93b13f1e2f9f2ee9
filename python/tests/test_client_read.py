"""The package's scan (one RecordBatchReader over every bucket), its to_* conveniences, and follow."""

import threading
import time

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from flux import unique

BUCKETS = 8


@pytest.fixture(scope="module")
def orders(fg):
    """A log table of 8 buckets, 1,000 rows in 4 writes."""
    table = f"fluss.{unique('orders')}"
    fg.create_table(table, {"id": "BIGINT NOT NULL", "item": "STRING", "amount": "DOUBLE"},
                    options={"bucket.num": BUCKETS, "bucket.key": "id"})
    for start in range(0, 1000, 250):
        ids = list(range(start, start + 250))
        fg.write(table, {"id": ids, "item": [f"i{i % 7}" for i in ids], "amount": [i / 10 for i in ids]})
    return table


def stream_threads():
    return [t for t in threading.enumerate() if t.name == "fluxgate-stream"]


def test_scan_reads_every_bucket_as_one_reader(fg, orders):
    reader = fg.scan(orders)
    assert isinstance(reader, pa.RecordBatchReader)
    assert reader.schema.names == ["id", "item", "amount"]
    table = reader.read_all()
    assert table.num_rows == 1000 and sorted(table["id"].to_pylist()) == list(range(1000))


def test_scan_reads_buckets_in_parallel(fg, orders, monkeypatch):
    """With parallelism 4, four streams are open at once: each waits until four have started."""
    from fluxgate import _streams

    started, all_open = [], threading.Event()
    read = _streams.Streams._read

    def counted(self, ticket):
        started.append(ticket)
        if len(started) >= 4:
            all_open.set()
        assert all_open.wait(30), f"only {len(started)} streams opened at once"
        read(self, ticket)

    monkeypatch.setattr(_streams.Streams, "_read", counted)
    assert fg.scan(orders, parallelism=4).read_all().num_rows == 1000
    assert len(started) == BUCKETS


def test_scan_projection_filter_limit(fg, orders):
    got = fg.scan(orders, columns=["amount", "id"], filter={"and": [{"ge": ["id", 10]}, {"lt": ["id", 20]}]})
    table = got.read_all().sort_by("id")
    assert table.schema.names == ["amount", "id"] and table["id"].to_pylist() == list(range(10, 20))
    assert fg.scan(orders, limit=7).read_all().num_rows == 7
    assert fg.scan(orders, buckets=[0]).read_all().num_rows < 1000


def test_scan_startup_offsets_and_latest(fg, orders):
    end = fg.list_offsets(orders)
    assert fg.scan(orders, startup="latest").read_all().num_rows == 0
    one_back = {b: o - 1 for b, o in end.items()}
    assert fg.scan(orders, startup=one_back).read_all().num_rows == BUCKETS
    assert fg.scan(orders, startup={}).read_all().num_rows == 1000  # no bucket named: each from its start


def test_scan_compression_none(fg, orders):
    assert fg.scan(orders, compression="none").read_all().num_rows == 1000


def test_a_scan_opens_its_streams_when_read_and_ends_them_when_dropped(fg, orders):
    reader = fg.scan(orders, parallelism=2)
    assert stream_threads() == []  # a reader dropped unread holds no stream
    assert reader.read_next_batch().num_rows > 0 and len(stream_threads()) == 2
    del reader  # dropped half read: its streams are cancelled
    assert stream_threads() == []
    assert fg.to_arrow(orders).num_rows == 1000  # the client goes on


def test_scan_raises_the_servers_error(fg, orders):
    with pytest.raises(KeyError, match="nope"):
        fg.scan(orders, columns=["nope"])
    with pytest.raises(pa.ArrowInvalid, match="out-of-range"):
        fg.scan(orders, startup={0: 10**9}).read_all()


def test_to_arrow_pandas_polars(fg, orders):
    where = {"lt": ["id", 3]}
    assert fg.to_arrow(orders, filter=where).sort_by("id")["id"].to_pylist() == [0, 1, 2]
    frame = fg.to_pandas(orders, filter=where, columns=["id", "item"])
    assert isinstance(frame, pd.DataFrame) and sorted(frame["id"]) == [0, 1, 2]
    polars = fg.to_polars(orders, filter=where)
    assert isinstance(polars, pl.DataFrame) and polars.sort("id")["item"].to_list() == ["i0", "i1", "i2"]


def rows_until(follow, count, timeout=30):
    """The batches of `follow` until they hold `count` rows, waiting at most `timeout` seconds in all."""
    deadline, batches = time.monotonic() + timeout, []
    while sum(b.data.num_rows for b in batches) < count:
        batch = follow.poll(max(0.0, deadline - time.monotonic()))
        assert batch is not None, f"only {sum(b.data.num_rows for b in batches)} of {count} rows came"
        batches.append(batch)
    return batches


def test_follow_batches_carry_offsets_and_resume(fg):
    table = f"fluss.{unique('events')}"
    fg.create_table(table, {"id": "BIGINT", "v": "STRING"}, options={"bucket.num": 2, "bucket.key": "id"})
    fg.write(table, {"id": [1, 2, 3], "v": ["old"] * 3})
    with fg.follow(table, startup="latest") as follow:
        assert follow.offsets == fg.list_offsets(table)  # planned at the end
        written = fg.write(table, {"id": [4, 5, 6, 7], "v": ["a", "b", "c", "d"]})
        batches = rows_until(follow, 4)
        assert sorted(v for b in batches for v in b.data["v"].to_pylist()) == ["a", "b", "c", "d"]
        for b in batches:
            assert b.partition is None and b.next == b.start + b.data.num_rows and b.high_watermark >= b.next
        assert follow.offsets == written.offsets
        resume_at = follow.offsets
    fg.write(table, {"id": [8, 9], "v": ["e", "f"]})
    with fg.follow(table, startup=resume_at) as resumed:  # exactly after what was read
        assert sorted(v for b in rows_until(resumed, 2) for v in b.data["v"].to_pylist()) == ["e", "f"]
        assert resumed.poll(0.5) is None


def test_follow_is_an_iterator(fg):
    table = f"fluss.{unique('events')}"
    fg.create_table(table, {"id": "BIGINT"})
    fg.write(table, {"id": [1, 2]})
    with fg.follow(table, startup="earliest", columns=["id"]) as follow:
        batch = next(iter(follow))
    assert batch.data.to_pydict() == {"id": [1, 2]} and batch.start == 0 and batch.next == 2
    with pytest.raises(ValueError, match="closed"):
        follow.poll(0)


def test_follow_of_a_changelog(fg):
    table = f"fluss.{unique('users')}"
    fg.create_table(table, {"id": "BIGINT", "name": "STRING"}, primary_key=["id"])
    fg.write(table, {"id": [1], "name": ["ann"]})
    with fg.follow(table + "$changelog") as follow:  # its default startup: earliest
        fg.write(table, {"id": [1], "name": ["anne"]})
        changes = [r for b in rows_until(follow, 3) for r in b.data.to_pylist()]
    assert [(c["_change_type"], c["name"]) for c in changes] == [
        ("insert", "ann"), ("update_before", "ann"), ("update_after", "anne")]


def test_follow_discovers_new_partitions(fg):
    table = f"fluss.{unique('visits')}"
    fg.create_table(table, {"id": "BIGINT", "dt": "STRING NOT NULL"}, partition_keys=["dt"])
    fg.write(table, {"id": [1], "dt": ["20261201"]})
    with fg.follow(table, startup="latest", partition_discovery=0.1) as follow:
        assert follow.offsets == {"20261201": {0: 1}}
        fg.write(table, {"id": [2, 3], "dt": ["20261201", "20261202"]})  # 20261202 is new: read from its start
        batches = rows_until(follow, 2)
        assert sorted((b.partition, b.data["id"][0].as_py()) for b in batches) == [("20261201", 2), ("20261202", 3)]
        assert follow.offsets == {"20261201": {0: 2}, "20261202": {0: 1}}
