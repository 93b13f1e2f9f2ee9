"""The JSON documents of the protocol (docs/PROTOCOL.md) as typed dictionaries, and the shapes of offsets."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

# A bucket's offsets: bucket -> offset; a partitioned table's: partition name -> bucket -> offset (PROTOCOL.md
# "Partitioned tables", Offsets).
BucketOffsets = dict[int, int]
PartitionOffsets = dict[str, dict[int, int]]
Offsets = BucketOffsets | PartitionOffsets

# Where a scan or follow starts (PROTOCOL.md §4.2): a mode, the first batch committed at or after a time (a naive
# datetime is local time, as Python reads it), or offsets (a follow's `offsets`, to resume it).
Startup = Literal["full", "earliest", "latest"] | datetime.datetime | Mapping[int, int] | Mapping[str, Mapping[int, int]]

# A predicate (PROTOCOL.md §4.4), e.g. {"and": [{"gt": ["amount", 2]}, {"eq": ["item", "pear"]}]}.
Filter = Mapping[str, Any]

# The Arrow IPC compression of the batches a scan receives (PROTOCOL.md §4.2); None: as the table stores them.
Compression = Literal["none", "zstd", "lz4_frame"]


class Column(TypedDict, total=False):
    """A column of a table definition."""

    name: str
    type: str
    nullable: bool
    comment: str


class Index(TypedDict):
    name: str
    columns: list[str]


class TableInfo(TypedDict, total=False):
    """A table as the server stores it (``describe-table``): its definition, every option with its default filled
    in, and what the server assigned."""

    table: str
    columns: list[Column]
    primary_key: list[str]
    partition_keys: list[str]
    options: dict[str, str]
    comment: str
    table_id: int
    schema_id: int
    created_at: int
    kind: Literal["log", "primary_key"]
    indexes: list[Index]


class PartitionInfo(TypedDict):
    """A partition of a partitioned table."""

    partition_id: int
    partition_name: str
    spec: dict[str, str]


class Grant(TypedDict, total=False):
    """Operations a principal may do on a database (``"*"``: every database) or one of its tables."""

    principal: str
    database: str
    table: str
    operations: list[str]
