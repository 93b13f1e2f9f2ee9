"""What writes and lookups accept, as Arrow record batches of a table's types."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, cast

import pyarrow as pa


class ArrowStream(Protocol):
    """Anything that exports an Arrow C stream: polars and pandas frames, DuckDB relations, pyarrow tables."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


# What write(), lookup() and their kin take: pyarrow tables, batches and readers, pandas and polars frames (or any
# Arrow stream), a dict of columns, or a list of rows as dicts.
Data = pa.Table | pa.RecordBatch | pa.RecordBatchReader | ArrowStream | Mapping[str, Sequence[Any]] | Sequence[Mapping[str, Any]]


def _arrow(data: Data) -> pa.Table | pa.RecordBatchReader:
    """The data as a pyarrow table, or as a reader for what comes as a stream. A pandas frame's index is left
    out: it is not a column of the table."""
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, (pa.Table, pa.RecordBatchReader)):
        return data
    if _is_pandas(data):
        return pa.Table.from_pandas(cast(Any, data), preserve_index=False)
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data)
    if isinstance(data, Mapping):
        return pa.table(dict(data))
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return pa.Table.from_pylist(list(data))
    raise TypeError(f"cannot send a {type(data).__name__}: give a pyarrow Table or RecordBatch, a pandas or "
                    "polars DataFrame, a dict of columns or a list of rows")


def _is_pandas(data: object) -> bool:
    kind = type(data)
    return kind.__name__ == "DataFrame" and kind.__module__.split(".")[0] == "pandas"


def record_batches(data: Data) -> Iterator[pa.RecordBatch]:
    """The data as record batches, read lazily from a reader or stream."""
    source = _arrow(data)
    yield from source.to_batches() if isinstance(source, pa.Table) else source


def one_batch(data: Data) -> pa.RecordBatch:
    """The data as a single record batch (which may have no rows)."""
    source = _arrow(data)
    table = source if isinstance(source, pa.Table) else source.read_all()
    return pa.RecordBatch.from_arrays([column.combine_chunks() for column in table.columns], schema=table.schema)


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """Casts each column named as a column of `schema` to its type (a safe cast: an overflow or a lost fraction
    raises), so that Python's int64 and float64, pandas' nanoseconds and large strings, polars' string views and
    categoricals arrive as the table's types. Other columns (``_change_type``, or ones the table lacks, which the
    server names in its error) stay as they are."""
    fields, arrays = [], []
    for field, column in zip(batch.schema, batch.columns):
        index = schema.get_field_index(field.name)
        target = schema.field(index).type if index >= 0 else field.type
        if column.type != target:
            column = column.cast(target)
        fields.append(pa.field(field.name, target))
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def split(batch: pa.RecordBatch, max_bytes: int) -> Iterator[pa.RecordBatch]:
    """Slices a batch into batches of about `max_bytes` at most (one row at least)."""
    if batch.num_rows <= 1 or batch.nbytes <= max_bytes:
        yield batch
        return
    rows = max(1, batch.num_rows * max_bytes // batch.nbytes)
    for offset in range(0, batch.num_rows, rows):
        yield batch.slice(offset, rows)
