"""Lookups over DoExchange (PROTOCOL.md §6): keys in, matching rows out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.flight as fl

from ._arrow import Data, conform, one_batch, split
from ._connection import Connection

KEY_INDEX = "_key_index"

# A key batch per exchange of at most this size, under the server's message limit.
_MAX_KEY_BYTES = 16 << 20


def lookup(conn: Connection, table: str, schema: pa.Schema, keys: Data, *, columns: Sequence[str] | None,
           prefix: bool, insert_if_not_exists: bool, create_partitions: bool | None) -> pa.Table:
    """Looks `keys` up; returns ``_key_index`` (the key's row in `keys`) and the columns, in key order.

    Each key batch goes on an exchange of its own, and every message of its answer is read: the server may send
    a large answer as several batches."""
    request: dict[str, Any] = {"table": table}
    if columns is not None:
        request["columns"] = list(columns)
    if prefix:
        request["prefix"] = True
    if insert_if_not_exists:
        request["insert_if_not_exists"] = True
    if create_partitions is not None:
        request["create_partitions"] = create_partitions
    descriptor = fl.FlightDescriptor.for_command(json.dumps({"lookup": request}).encode())
    answers, answer_schema, base = [], None, 0
    for key_batch in split(conform(one_batch(keys), schema), _MAX_KEY_BYTES):
        got, answer_schema = _exchange(conn, descriptor, key_batch)
        answers += [_shift(answer, base) for answer in got]
        base += key_batch.num_rows
    assert answer_schema is not None  # split yields one batch at least
    return pa.Table.from_batches(answers, schema=answer_schema)


def _exchange(conn: Connection, descriptor: fl.FlightDescriptor,
              keys: pa.RecordBatch) -> tuple[list[pa.RecordBatch], pa.Schema]:
    writer, reader = conn.flight.do_exchange(descriptor, options=conn.options())
    with writer:
        writer.begin(keys.schema)
        writer.write_batch(keys)
        writer.done_writing()
        answers = []
        while True:
            try:
                chunk = reader.read_chunk()
            except StopIteration:
                break
            if chunk.data is not None:
                answers.append(chunk.data)
        return answers, reader.schema


def _shift(answer: pa.RecordBatch, base: int) -> pa.RecordBatch:
    """Makes ``_key_index`` count from the first key of the whole lookup, not of its key batch."""
    if base == 0:
        return answer
    i = answer.schema.get_field_index(KEY_INDEX)
    shifted = pc.add(answer.column(i), pa.scalar(base, pa.int32()))
    return answer.set_column(i, answer.schema.field(i), shifted)
