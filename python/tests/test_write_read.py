"""DoPut with acknowledgements and idempotent writers; for_path and scan-command reads, follows and $changelog."""

import datetime
import json
import threading
import uuid

import pandas as pd
import pyarrow as pa
import pyarrow.flight as fl
import pytest

from flux import action, command, create_table, path, put, read, scan, unique
from fluxgate_server import Server

ORDERS = {"order_id": {"type": "BIGINT", "nullable": False}, "item": "STRING", "amount": "DOUBLE"}


def orders_batch(ids):
    return pa.record_batch({
        "order_id": pa.array(ids, pa.int64()),
        "item": pa.array([f"item{i}" for i in ids], pa.string()),
        "amount": pa.array([None if i % 5 == 0 else i * 1.5 for i in ids], pa.float64()),
    })


@pytest.fixture
def orders(client):
    """A two-bucket log table with 20 rows written in two batches."""
    table = f"fluss.{unique('orders')}"
    create_table(client, table, ORDERS, {"bucket.num": "2", "bucket.key": "order_id"})
    put(client, path(table), orders_batch(range(10)), orders_batch(range(10, 20)))
    return table


def test_put_acknowledges_each_batch_with_its_end_offsets(client):
    table = f"fluss.{unique()}"
    create_table(client, table, ORDERS, {"bucket.num": "2", "bucket.key": "order_id"})
    acks = put(client, path(table), orders_batch([1, 2, 3]), orders_batch([4]), orders_batch([]))
    assert [a["sequence"] for a in acks] == [0, 1, 2]
    assert [a["rows"] for a in acks] == [3, 1, 0]
    assert sum(acks[0]["buckets"].values()) == 3
    assert acks[2]["buckets"] == {}
    offsets = action(client, "list-offsets", {"table": table, "at": "latest"})["offsets"]
    assert sum(offsets.values()) == 4


def test_idempotent_writer_applies_a_retried_batch_once(client):
    table = f"fluss.{unique()}"
    create_table(client, table, ORDERS)
    writer_id = uuid.uuid4().hex
    first = put(client, command({"write": {"table": table, "writer_id": writer_id}}), orders_batch([1, 2]))
    # The writer crashed before it saw the ack and retries the same sequence on a new stream.
    retry = put(client, command({"write": {"table": table, "writer_id": writer_id, "first_sequence": 0}}),
                orders_batch([1, 2]), orders_batch([3]))
    assert retry[0] == first[0]
    assert retry[1]["sequence"] == 1
    assert sorted(scan(client, table=table)["order_id"].to_pylist()) == [1, 2, 3]
    with pytest.raises(pa.ArrowInvalid, match="precondition failed.*sequence 5 is out of order"):
        put(client, command({"write": {"table": table, "writer_id": writer_id, "first_sequence": 5}}),
            orders_batch([9]))


def test_for_path_reads_every_bucket(client, orders):
    table, info = read(client, path(orders))
    assert len(info.endpoints) == 2
    assert info.total_records == 20
    assert sorted(table["order_id"].to_pylist()) == list(range(20))
    df = table.to_pandas().sort_values("order_id", ignore_index=True)
    expected = orders_batch(range(20)).to_pandas()
    pd.testing.assert_frame_equal(df, expected)
    meta = json.loads(info.app_metadata)
    assert meta["buckets"] == 2 and meta["lake_snapshot_id"] is None


def test_projection_filter_and_limit(client, orders):
    got = scan(client, table=orders, columns=["amount", "order_id"],
               filter={"and": [{"ge": ["order_id", 4]}, {"is_not_null": "amount"}]})
    assert got.schema.names == ["amount", "order_id"]
    assert sorted(got["order_id"].to_pylist()) == [i for i in range(4, 20) if i % 5 != 0]

    info = client.get_flight_info(command({"scan": {"table": orders, "limit": 7}}))
    assert len(info.endpoints) == 1
    assert client.do_get(info.endpoints[0].ticket).read_all().num_rows == 7

    got = scan(client, table=orders, filter={"in": ["item", ["item3", "item13"]]}, columns=["order_id"])
    assert sorted(got["order_id"].to_pylist()) == [3, 13]


def test_zstd_batches_as_stored_read_like_uncompressed(client, orders):
    plain = scan(client, table=orders, compression="none").sort_by("order_id")
    assert scan(client, table=orders).sort_by("order_id").equals(plain)  # as stored, the default
    for compression in ["zstd", "lz4_frame"]:
        assert scan(client, table=orders, compression=compression).sort_by("order_id").equals(plain)


def test_lz4_batches_of_pyarrow_are_stored_and_read_back_as_sent(client):
    """pyarrow's LZ4 frames (LZ4F's: linked 64 KiB blocks) pass the intake's checks, are stored as received by an
    LZ4 table, and read back, as stored and uncompressed, as written."""
    table = f"fluss.{unique('lz4')}"
    create_table(client, table, ORDERS, {"table.log.arrow.compression.type": "lz4_frame"})
    batch = orders_batch(range(50_000))  # buffers of several 64 KiB blocks
    lz4 = fl.FlightCallOptions(write_options=pa.ipc.IpcWriteOptions(compression="lz4"))
    put(client, path(table), batch, options=lz4)
    for compression in [None, "none"]:  # as stored (the frames pyarrow sent), and uncompressed by the server
        got = scan(client, table=table, **({"compression": compression} if compression else {}))
        assert got.schema.names == batch.schema.names
        assert all(got[name].combine_chunks().equals(batch[name]) for name in batch.schema.names)


def test_a_producer_goes_on_after_a_column_is_added(client):
    """A log-table batch may leave out nullable columns: a producer that knows only the columns before an
    add-column alter goes on, its batches compressed or not, and its rows read the new column as NULL, as stored
    and uncompressed."""
    table = f"fluss.{unique('evolving')}"
    create_table(client, table, ORDERS)
    action(client, "alter-table", {"table": table, "add_columns": [{"name": "note", "type": "STRING"}]})
    zstd = fl.FlightCallOptions(write_options=pa.ipc.IpcWriteOptions(compression="zstd"))
    put(client, path(table), orders_batch(range(3)), options=zstd)  # stored as received, note added by the server
    put(client, path(table), orders_batch(range(3, 5)).select(["item", "order_id"]))  # and without amount
    with pytest.raises(pa.ArrowInvalid, match='lacks column "order_id", which is NOT NULL'):
        put(client, path(table), orders_batch([9]).select(["item"]))
    for compression in [None, "none"]:
        got = scan(client, table=table, **({"compression": compression} if compression else {}))
        assert got.schema.names == ["order_id", "item", "amount", "note"]
        assert sorted(got.to_pylist(), key=lambda r: r["order_id"]) == [
            {"order_id": i, "item": f"item{i}", "amount": None if i % 5 == 0 or i >= 3 else i * 1.5, "note": None}
            for i in range(5)]


def test_follow_every_bucket_with_app_metadata(client, orders):
    info = client.get_flight_info(command({"scan": {"table": orders, "startup": "latest", "stop": "none"}}))
    readers = [client.do_get(ep.ticket) for ep in info.endpoints]
    seen, lock, done = [], threading.Lock(), threading.Event()

    def follow(reader):
        try:
            for chunk in reader:
                meta = json.loads(chunk.app_metadata.to_pybytes())
                with lock:
                    seen.append((meta, chunk.data.column("order_id").to_pylist()))
                    if sorted(i for _, ids in seen for i in ids) == list(range(100, 110)):
                        done.set()
        except fl.FlightCancelledError:
            pass

    threads = [threading.Thread(target=follow, args=(r,)) for r in readers]
    for t in threads:
        t.start()
    put(client, path(orders), orders_batch(range(100, 110)))
    finished = done.wait(30)
    for r in readers:
        r.cancel()
    for t in threads:
        t.join(30)
    assert finished, f"the follow saw {seen}"
    buckets = {m["bucket"] for m, ids in seen if ids}
    assert buckets == {0, 1}
    for meta, ids in seen:
        assert set(meta) == {"bucket", "start", "next", "high_watermark"}
        assert meta["next"] - meta["start"] >= len(ids) and meta["next"] <= meta["high_watermark"]


@pytest.fixture(scope="module")
def quiet_follows(tmp_path_factory):
    """A server whose follows send their first heartbeat after an hour: only a schema sent at once arrives."""
    with Server(tmp_path_factory.mktemp("quiet") / "data", ["--follow-heartbeat", "1h"]) as srv:
        c = fl.connect(srv.address)
        yield c
        c.close()


def test_a_follow_from_latest_gives_its_schema_at_once(quiet_follows):
    """do_get of a follow from the log's end gives its reader, with the schema, before any data or heartbeat."""
    client = quiet_follows
    table = f"fluss.{unique('quiet')}"
    create_table(client, table, ORDERS, {"bucket.num": "2"})
    info = client.get_flight_info(command({"scan": {"table": table, "startup": "latest", "stop": "none"}}))
    assert len(info.endpoints) == 2
    # The deadline only ends the test if a schema never comes (the heartbeat is an hour away).
    guard = fl.FlightCallOptions(timeout=60)
    for ep in info.endpoints:
        reader = client.do_get(ep.ticket, options=guard)
        try:
            assert reader.schema == info.schema
        finally:
            reader.cancel()


def test_changelog_of_a_primary_key_table(client):
    table = f"fluss.{unique('users')}"
    create_table(client, table, {"id": "BIGINT", "name": "STRING"}, primary_key=["id"])
    put(client, path(table), pa.record_batch({"id": pa.array([1, 2], pa.int64()), "name": ["ann", "bob"]}))
    put(client, path(table), pa.record_batch({"id": pa.array([1], pa.int64()), "name": ["anne"]}))
    put(client, command({"write": {"table": table, "mode": "delete"}}),
        pa.record_batch({"id": pa.array([2], pa.int64()), "name": pa.array([None], pa.string())}))

    current = scan(client, table=table)
    assert current.to_pylist() == [{"id": 1, "name": "anne"}]
    changes, _ = read(client, path(table + "$changelog"))
    assert changes.schema.names[:3] == ["_change_type", "_log_offset", "_commit_timestamp"]
    assert changes.schema.field("_commit_timestamp").type == pa.timestamp("ms", tz="UTC")
    rows = sorted(changes.select(["_log_offset", "_change_type", "id", "name"]).to_pylist(),
                  key=lambda r: r["_log_offset"])
    assert [(r["_change_type"], r["id"], r["name"]) for r in rows] == [
        ("insert", 1, "ann"), ("insert", 2, "bob"), ("update_before", 1, "ann"), ("update_after", 1, "anne"),
        ("delete", 2, "bob")]


def test_partial_updates_join_two_streams(client):
    table = f"fluss.{unique()}"
    create_table(client, table, {"id": "BIGINT", "a": "STRING", "b": "STRING"}, primary_key=["id"])
    for part in [pa.record_batch({"id": pa.array([1, 2], pa.int64()), "a": ["x", "y"]}),
                 pa.record_batch({"id": pa.array([2, 3], pa.int64()), "b": ["q", "r"]})]:
        put(client, command({"write": {"table": table, "columns": part.schema.names}}), part)
    assert scan(client, table=table).sort_by("id").to_pylist() == [
        {"id": 1, "a": "x", "b": None}, {"id": 2, "a": "y", "b": "q"}, {"id": 3, "a": None, "b": "r"}]


def test_pandas_and_polars_frames_write_as_they_are(client):
    import polars as pl

    table = f"fluss.{unique()}"
    create_table(client, table, {"h": "STRING", "x": "DOUBLE", "tags": "ARRAY<STRING>", "at": "TIMESTAMP(6)"})
    at = [datetime.datetime(2026, 1, 2, 3, 4, 5, 678901), datetime.datetime(2026, 1, 2)]
    frame = {"h": ["a", "b"], "x": [1.0, 2.0], "tags": [["p", "q"], []], "at": at}
    put(client, path(table), pa.RecordBatch.from_pandas(pd.DataFrame(frame), preserve_index=False))
    put(client, path(table), *pl.DataFrame(frame).to_arrow().to_batches())
    got = scan(client, table=table)
    assert got.schema.field("h").type == pa.string() and got.schema.field("tags").type == pa.list_(pa.string())
    assert got.to_pylist() == [{"h": h, "x": x, "tags": tags, "at": t} for _ in range(2)
                               for h, x, tags, t in zip(frame["h"], frame["x"], frame["tags"], at)]
