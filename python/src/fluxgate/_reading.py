"""Scans (bounded, as one RecordBatchReader) and follows (unbounded, as batches with their offsets)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import pyarrow as pa
import pyarrow.flight as fl

from ._connection import Connection
from ._streams import Streams
from ._types import BucketOffsets, Offsets, PartitionInfo, PartitionOffsets


def scan_reader(conn: Connection, info: fl.FlightInfo, parallelism: int) -> pa.RecordBatchReader:
    """One reader over every endpoint of a bounded scan, at most `parallelism` streams read at once. Batches of one
    bucket keep their order; buckets interleave. A reader dropped before its end cancels its streams (pyarrow's
    `close` does not reach them: they end when the reader is collected)."""
    schema = info.schema

    def batches() -> Iterator[pa.RecordBatch]:
        # Started at the first read, so that a reader dropped unread holds no stream; once started, the
        # generator's close, when pyarrow drops it with the reader, ends them.
        streams = Streams(conn, capacity=2 * parallelism, bounded=True)
        try:
            streams.start([ep.ticket for ep in info.endpoints], min(parallelism, len(info.endpoints)))
            while (chunk := streams.get()) is not None:
                if chunk.data.num_rows:  # empty batches only carry offsets
                    yield _with_schema(chunk.data, schema)
        finally:
            streams.close()

    return pa.RecordBatchReader.from_batches(schema, batches())


def _with_schema(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    if batch.schema.equals(schema):
        return batch
    return pa.RecordBatch.from_arrays(batch.columns, schema=schema)


@dataclass(frozen=True)
class Batch:
    """A followed batch and where it is in its bucket's log (PROTOCOL.md §4.3).

    Attributes:
        data: the rows.
        bucket: the bucket they come from.
        partition: the partition's name, on a partitioned table; else None.
        start: the offset of the batch's first row.
        next: the offset to resume from after this batch (what `Follow.offsets` holds).
        high_watermark: the bucket's end offset when the batch was sent.
    """

    data: pa.RecordBatch
    bucket: int
    partition: str | None
    start: int
    next: int
    high_watermark: int


class Follow:
    """An unbounded scan of every bucket (and partition): iterate it, or `poll` it, for `Batch` es; `close` it (or
    use it in a ``with`` block) to end it.

    `offsets` is where each bucket goes on after the batches returned so far; pass it as `startup` to a new follow
    to resume exactly there. Empty batches the server sends while a bucket is idle (or while a filter matches
    nothing) advance the offsets without being returned.

    A follow of every partition of a partitioned table also reads the partitions created after it started, from
    their first offset: it lists them every `partition_discovery` seconds.

    A follow not polled for longer than the server's ``--stream-idle-timeout`` has its streams ended by the server; it
    opens them again where it stopped, so every row still comes exactly once."""

    def __init__(self, conn: Connection, info: fl.FlightInfo, partitioned: bool,
                 plan_new: Callable[[list[str]], fl.FlightInfo] | None,
                 list_partitions: Callable[[], list[PartitionInfo]], partition_discovery: float) -> None:
        self._partitioned = partitioned
        self._offsets: dict[tuple[str | None, int], int] = {}
        self._offsets_lock = threading.Lock()  # the discovery adds the offsets of new partitions
        self._streams = Streams(conn, capacity=2 * max(1, len(info.endpoints)), bounded=False)
        self._closed = threading.Event()
        self._start(info)
        if plan_new is not None:
            known = {p["partition_name"] for p in plan_meta(info).get("partitions", [])}
            thread = threading.Thread(target=self._discover, args=(known, plan_new, list_partitions,
                                                                   partition_discovery),
                                      daemon=True, name="fluxgate-partition-discovery")
            thread.start()

    def _start(self, info: fl.FlightInfo) -> None:
        for ep in info.endpoints:
            ticket = json.loads(ep.ticket.ticket)
            # Log and changelog tickets start at their offset; a snapshot's or a lake part's first batch says where
            # its bucket is.
            if ticket.get("view") in ("log", "changelog") and not ticket.get("snapshot"):
                with self._offsets_lock:
                    self._offsets.setdefault((ticket.get("partition"), ticket["bucket"]), ticket["start"])
        self._streams.start([ep.ticket for ep in info.endpoints], len(info.endpoints))

    def _discover(self, known: set[str], plan_new: Callable[[list[str]], fl.FlightInfo],
                  list_partitions: Callable[[], list[PartitionInfo]], interval: float) -> None:
        while not self._closed.wait(interval):
            try:
                fresh = [p["partition_name"] for p in list_partitions() if p["partition_name"] not in known]
                if not fresh:
                    continue
                try:
                    info = plan_new(fresh)
                except KeyError:  # NOT_FOUND: dropped before it was planned; the next listing has it no more
                    continue
                known.update(fresh)
                if not self._closed.is_set():
                    self._start(info)
            except BaseException as err:
                if not self._closed.is_set():
                    self._streams.fail(err)
                return

    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        while True:
            batch = self.poll(None)
            if batch is not None:
                return batch

    def poll(self, timeout: float | None) -> Batch | None:
        """The next batch with rows, or None when none came within `timeout` seconds (None: wait for one)."""
        if self._closed.is_set():
            raise ValueError("the follow is closed")
        while True:
            chunk = self._streams.get(timeout)
            if chunk is None:
                return None
            meta = chunk.meta
            partition = meta.get("partition")
            with self._offsets_lock:
                self._offsets[(partition, meta["bucket"])] = meta["next"]
            if chunk.data.num_rows:
                return Batch(chunk.data, meta["bucket"], partition, meta["start"], meta["next"],
                             meta["high_watermark"])

    @property
    def offsets(self) -> Offsets:
        """Each bucket's next offset after the batches returned so far: bucket -> offset, or, on a partitioned
        table, partition name -> bucket -> offset."""
        with self._offsets_lock:
            offsets = dict(self._offsets)
        if self._partitioned:
            partitions: PartitionOffsets = {}
            for (partition, bucket), offset in offsets.items():
                partitions.setdefault(str(partition), {})[bucket] = offset
            return partitions
        buckets: BucketOffsets = {bucket: offset for (_, bucket), offset in offsets.items()}
        return buckets

    def close(self) -> None:
        """Ends the follow: cancels its streams."""
        self._closed.set()
        self._streams.close()

    def __enter__(self) -> Follow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plan_meta(info: fl.FlightInfo) -> dict[str, Any]:
    """The app_metadata of a scan's FlightInfo (docs/PROTOCOL.md §4.3)."""
    raw = info.app_metadata
    return cast(dict[str, Any], json.loads(raw)) if raw else {}
