"""Writes: one DoPut stream per writer, each batch acknowledged before the next is sent (PROTOCOL.md §5)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

import pyarrow as pa
import pyarrow.flight as fl

from ._arrow import Data, conform, record_batches, split
from ._connection import Connection
from ._types import BucketOffsets, Offsets, PartitionOffsets, TableInfo

# Batches are sent in slices of about this size: well under the server's default message limit (64 MiB), and
# small enough that a slow batch does not hold the write budget long.
DEFAULT_MAX_BATCH_BYTES = 16 << 20


@dataclass
class WriteResult:
    """What the server acknowledged.

    Attributes:
        rows: rows written.
        batches: batches written, each applied atomically.
        offsets: each bucket's end offset after the last batch that touched it: bucket -> offset, or, on a
            partitioned table, partition name -> bucket -> offset.
        sequence: the last batch's sequence number (counting from `first_sequence` for an idempotent writer).
    """

    rows: int = 0
    batches: int = 0
    offsets: Offsets = field(default_factory=dict)
    sequence: int | None = None

    def _add(self, ack: dict[str, Any]) -> None:
        self.rows += ack["rows"]
        self.batches += 1
        self.sequence = ack["sequence"]
        if "partition_offsets" in ack:
            partitions = cast(PartitionOffsets, self.offsets)
            for name, buckets in ack["partition_offsets"].items():
                partitions.setdefault(name, {}).update({int(b): o for b, o in buckets.items()})
        else:
            cast(BucketOffsets, self.offsets).update({int(b): o for b, o in ack.get("buckets", {}).items()})


def write_options(info: TableInfo) -> pa.ipc.IpcWriteOptions | None:
    """Log tables get batches compressed with their own codec and level, which the server then stores as received
    (PROTOCOL.md §5, Compressed batches); primary-key tables store what they are sent their own way, so theirs go
    uncompressed."""
    options = info.get("options", {})
    codec = options.get("table.log.arrow.compression.type")
    if info.get("kind") != "log" or codec not in ("zstd", "lz4_frame"):
        return None
    if codec == "zstd":
        return pa.ipc.IpcWriteOptions(compression=pa.Codec(
            "zstd", int(options.get("table.log.arrow.compression.zstd.level", "1"))))
    return pa.ipc.IpcWriteOptions(compression="lz4")


class Writer:
    """A DoPut stream to one table: each `write` sends its data as batches and returns when the server has
    acknowledged them (applied, durable and visible). Every write of a writer carries the same columns. Close it,
    or use it in a ``with`` block: a refused batch raises the server's error from `write`."""

    def __init__(self, conn: Connection, descriptor: fl.FlightDescriptor, schema: pa.Schema,
                 options: pa.ipc.IpcWriteOptions | None, max_batch_bytes: int) -> None:
        self._conn, self._descriptor, self._schema = conn, descriptor, schema
        self._options, self._max_batch_bytes = options, max_batch_bytes
        self._writer: fl.FlightStreamWriter | None = None
        self._acks: fl.FlightMetadataReader | None = None
        self._stream_schema = pa.schema([])

    def write(self, data: Data) -> WriteResult:
        """Sends `data` (see `Client.write`) and waits for each batch's acknowledgement."""
        result = WriteResult()
        for batch in record_batches(data):
            for part in split(conform(batch, self._schema), self._max_batch_bytes):
                if part.num_rows:
                    result._add(self._send(part))
        return result

    def _send(self, batch: pa.RecordBatch) -> dict[str, Any]:
        if self._writer is None or self._acks is None:
            # pyarrow answers the acknowledgements' reader as a FlightMetadataReader (its stubs say otherwise).
            self._writer, self._acks = cast(tuple[fl.FlightStreamWriter, fl.FlightMetadataReader],
                                            self._conn.flight.do_put(self._descriptor, batch.schema,
                                                                     options=self._conn.options(self._options)))
            self._stream_schema = batch.schema
        elif not batch.schema.equals(self._stream_schema):
            raise ValueError(f"this writer sends the columns {self._stream_schema.names}, not {batch.schema.names}: "
                             "write them, or open another writer")
        try:
            self._writer.write_batch(batch)
            ack = self._acks.read()
        except Exception:
            self.close()  # raises the server's error, if it ended the call
            raise
        if ack is None:
            self.close()
            raise ConnectionAbortedError("the server ended the write without acknowledging the batch")
        return cast(dict[str, Any], json.loads(ack.to_pybytes()))

    def close(self) -> None:
        """Ends the stream; raises the server's error if it refused something."""
        writer, self._writer, self._acks = self._writer, None, None
        if writer is not None:
            writer.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
