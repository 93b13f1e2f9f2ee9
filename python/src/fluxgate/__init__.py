"""fluxgate's Python client: tables, scans, follows, writes and lookups, over pyarrow.flight.

    import fluxgate

    with fluxgate.connect("127.0.0.1:8815") as fg:       # or $FLUXGATE_ADDR; token=, user=/password=, tls=
        fg.create_table("fluss.orders", {"order_id": "BIGINT NOT NULL", "amount": "DOUBLE"}, if_not_exists=True)
        fg.write("fluss.orders", {"order_id": [1, 2], "amount": [1.5, None]})   # or a pandas/polars frame
        print(fg.to_pandas("fluss.orders", filter={"gt": ["amount", 1]}))

The wire protocol underneath is docs/PROTOCOL.md of the fluxgate repository.
"""

from ._arrow import ArrowStream, Data
from ._connection import TLS
from ._reading import Batch, Follow
from ._types import (
    BucketOffsets,
    Column,
    Compression,
    Filter,
    Grant,
    Offsets,
    PartitionInfo,
    PartitionOffsets,
    Startup,
    TableInfo,
)
from ._write import WriteResult, Writer
from .client import Client, ScanOptions, connect

__all__ = [
    "ArrowStream",
    "Batch",
    "BucketOffsets",
    "Client",
    "Column",
    "Compression",
    "Data",
    "Filter",
    "Follow",
    "Grant",
    "Offsets",
    "PartitionInfo",
    "PartitionOffsets",
    "ScanOptions",
    "Startup",
    "TLS",
    "TableInfo",
    "WriteResult",
    "Writer",
    "connect",
]
