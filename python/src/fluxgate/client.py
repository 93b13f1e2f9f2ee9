"""The client: a connection to one fluxgate server and everything it does."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack, cast

import pyarrow as pa
import pyarrow.flight as fl

from . import _lookup
from ._address import DEFAULT_ADDR
from ._arrow import Data
from ._connection import TLS, Connection
from ._reading import Follow, plan_meta, scan_reader
from ._types import (
    Column,
    Compression,
    Filter,
    Grant,
    Offsets,
    PartitionInfo,
    Startup,
    TableInfo,
)
from ._write import DEFAULT_MAX_BATCH_BYTES, WriteResult, Writer, write_options

if TYPE_CHECKING:
    import pandas
    import polars


def connect(addr: str | None = None, *, token: str | None = None, user: str | None = None,
            password: str | None = None, tls: TLS | bool | None = None) -> Client:
    """Connects to a fluxgate server.

    Args:
        addr: ``host:port``, ``grpc://host:port`` or ``grpc+tls://host:port``; None: ``$FLUXGATE_ADDR``, else
            ``127.0.0.1:8815``.
        token: a bearer token (a static API token of the users file, or one a handshake returned).
        user: a user of the server's users file, with `password`: the client shakes hands for a token, and again
            when it expires.
        password: the user's password.
        tls: TLS settings (`TLS`: a private CA, a client certificate); True: TLS trusting the system's roots. A
            ``grpc+tls://`` address speaks TLS without it.
    """
    return Client(addr if addr is not None else os.environ.get("FLUXGATE_ADDR", DEFAULT_ADDR),
                  token=token, user=user, password=password, tls=tls)


class ScanOptions(TypedDict, total=False):
    """The options of `Client.scan`, which `to_arrow`, `to_pandas` and `to_polars` take too."""

    columns: Sequence[str] | None
    filter: Filter | None
    limit: int | None
    startup: Startup | None
    buckets: Sequence[int] | None
    partitions: Sequence[str] | None
    compression: Compression | None
    parallelism: int


class Client:
    """A connection to a fluxgate server (see `connect`). Tables are named ``database.table`` (the database
    ``fluss`` when left out); ``t$changelog`` and ``t$lake`` name a table's views (docs/PROTOCOL.md §4.5).

    Errors are pyarrow's: `pyarrow.ArrowInvalid` for INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE and
    RESOURCE_EXHAUSTED (the message starts with which), `KeyError` (`pyarrow.ArrowKeyError`) for NOT_FOUND,
    `pyarrow.ArrowException` for ALREADY_EXISTS, and `pyarrow.flight`'s classes for the others, each with the
    server's message."""

    def __init__(self, addr: str, *, token: str | None = None, user: str | None = None,
                 password: str | None = None, tls: TLS | bool | None = None) -> None:
        self._conn = Connection(addr, tls=tls, token=token, user=user, password=password)

    @property
    def flight(self) -> fl.FlightClient:
        """The pyarrow FlightClient underneath, for calls of docs/PROTOCOL.md this client has no method for (pass
        `call_options` to them)."""
        return self._conn.flight

    @property
    def call_options(self) -> fl.FlightCallOptions:
        """Call options carrying this client's credentials."""
        return self._conn.options()

    def close(self) -> None:
        """Closes the connection; streams still open fail."""
        self._conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Actions

    def action(self, name: str, body: Mapping[str, Any]) -> Any:
        """Runs an action (docs/PROTOCOL.md §3) and returns its JSON answer."""
        payload = json.dumps(body).encode()
        results = self._conn.call(lambda opts: list(self._conn.flight.do_action(fl.Action(name, payload),
                                                                                 options=opts)))
        if len(results) != 1:
            raise RuntimeError(f"action {name} answered {len(results)} results, not one")
        return json.loads(results[0].body.to_pybytes())

    def _pages(self, name: str, body: dict[str, Any], field: str) -> list[Any]:
        """Every item of a paged listing, following its page tokens."""
        items: list[Any] = []
        while True:
            page = self.action(name, body)
            items += page[field]
            if "next_page_token" not in page:
                return items
            body = {**body, "page_token": page["next_page_token"]}

    # Databases

    def create_database(self, database: str, *, if_not_exists: bool = False) -> None:
        """Creates a database; ALREADY_EXISTS if it does, unless `if_not_exists`."""
        self.action("create-database", {"database": database, "if_not_exists": if_not_exists})

    def drop_database(self, database: str, *, if_exists: bool = False, cascade: bool = False) -> None:
        """Drops a database; one with tables only with `cascade` (dropping them and their data)."""
        self.action("drop-database", {"database": database, "if_exists": if_exists, "cascade": cascade})

    def list_databases(self) -> list[str]:
        """The databases (that the caller may see, with users)."""
        return cast(list[str], self._pages("list-databases", {}, "databases"))

    # Tables

    def create_table(self, table: str, columns: Mapping[str, str | Column] | Sequence[Column], *,
                     primary_key: Sequence[str] | None = None, partition_keys: Sequence[str] | None = None,
                     options: Mapping[str, str | int | bool] | None = None, comment: str | None = None,
                     if_not_exists: bool = False) -> TableInfo:
        """Creates a table and returns it as stored (every option's default filled in).

        Args:
            table: ``database.table``.
            columns: name -> Flink SQL type (``"BIGINT"``, ``"STRING NOT NULL"``, ``"DECIMAL(10,2)"``) or
                `Column`; or a list of `Column` (``{"name", "type", "nullable", "comment"}``).
            primary_key: makes a primary-key table (one row per key); else a log table.
            partition_keys: makes a partitioned table (docs/PROTOCOL.md "Partitioned tables").
            options: Fluss's table options (``bucket.num``, ``bucket.key``, ``table.merge-engine``,
                ``table.datalake.enabled``, ...); numbers and booleans are sent as their text.
            comment: the table's comment.
            if_not_exists: return the existing table instead of ALREADY_EXISTS.
        """
        spec: dict[str, Any] = {"table": table, "columns": _columns(columns), "if_not_exists": if_not_exists}
        if primary_key:
            spec["primary_key"] = list(primary_key)
        if partition_keys:
            spec["partition_keys"] = list(partition_keys)
        if options:
            spec["options"] = _option_values(options)
        if comment is not None:
            spec["comment"] = comment
        return cast(TableInfo, self.action("create-table", spec))

    def drop_table(self, table: str, *, if_exists: bool = False) -> None:
        """Drops a table with its data (and its lake table)."""
        self.action("drop-table", {"table": table, "if_exists": if_exists})

    def describe_table(self, table: str) -> TableInfo:
        """The table as stored: columns, keys, every option with its default, id and schema id."""
        return cast(TableInfo, self.action("describe-table", {"table": table}))

    def list_tables(self, database: str | None = None) -> list[TableInfo]:
        """The tables of a database (None: of every database)."""
        body = {} if database is None else {"database": database}
        return cast(list[TableInfo], self._pages("list-tables", body, "tables"))

    def alter_table(self, table: str, *, set_options: Mapping[str, str | int | bool] | None = None,
                    reset_options: Sequence[str] | None = None,
                    add_columns: Mapping[str, str | Column] | Sequence[Column] | None = None) -> TableInfo:
        """Changes a table: sets or resets the options that may change (``table.datalake.enabled``,
        ``table.datalake.freshness``, ``table.log.ttl``, the automatic partitions'), and adds nullable columns at
        the end (rows written before read them as NULL)."""
        body: dict[str, Any] = {"table": table}
        if set_options:
            body["set"] = _option_values(set_options)
        if reset_options:
            body["reset"] = list(reset_options)
        if add_columns:
            body["add_columns"] = _columns(add_columns)
        return cast(TableInfo, self.action("alter-table", body))

    def table_stats(self, table: str, *, partitions: Sequence[str] | None = None) -> dict[str, Any]:
        """The table's row count without reading it: ``{"row_count", "buckets"}`` (or ``"partitions"``)."""
        body: dict[str, Any] = {"table": table}
        if partitions is not None:
            body["partitions"] = list(partitions)
        return cast(dict[str, Any], self.action("table-stats", body))

    def list_offsets(self, table: str, at: Literal["earliest", "latest"] | datetime.datetime = "latest", *,
                     buckets: Sequence[int] | None = None, partitions: Sequence[str] | None = None) -> Offsets:
        """Each bucket's earliest or latest offset, or the first offset committed at or after a time."""
        body: dict[str, Any] = {"table": table, "at": _at(at)}
        if buckets is not None:
            body["buckets"] = list(buckets)
        if partitions is not None:
            body["partitions"] = list(partitions)
        return _offsets_from_json(self.action("list-offsets", body))

    # Partitions

    def create_partition(self, table: str, spec: Mapping[str, str], *, if_not_exists: bool = False) -> PartitionInfo:
        """Creates a partition: a value for each partition key, e.g. ``{"dt": "20261201"}``."""
        return cast(PartitionInfo, self.action("create-partition", {"table": table, "partition": dict(spec),
                                                                    "if_not_exists": if_not_exists}))

    def drop_partition(self, table: str, spec: Mapping[str, str], *, if_exists: bool = False) -> None:
        """Drops a partition, its log and primary-key state (its lake rows stay until the table is dropped)."""
        self.action("drop-partition", {"table": table, "partition": dict(spec), "if_exists": if_exists})

    def list_partitions(self, table: str, spec: Mapping[str, str] | None = None) -> list[PartitionInfo]:
        """The table's partitions in name order; `spec` (some of the keys) selects some."""
        body: dict[str, Any] = {"table": table}
        if spec:
            body["partition"] = dict(spec)
        return cast(list[PartitionInfo], self._pages("list-partitions", body, "partitions"))

    # Grants (a server with users; admins only)

    def grant(self, principal: str, operations: Sequence[str], *, database: str, table: str | None = None) -> None:
        """Gives a user or token the operations (``read``, ``write``, ``create``, ``drop``, ``alter``,
        ``describe``) on a database (``"*"``: every one) or one of its tables."""
        self.action("grant", _grant(principal, operations, database, table))

    def revoke(self, principal: str, operations: Sequence[str], *, database: str, table: str | None = None) -> None:
        """Takes back exactly the operations named on exactly that database or table."""
        self.action("revoke", _grant(principal, operations, database, table))

    def list_grants(self, principal: str | None = None) -> list[Grant]:
        """The grants of a principal (None: everyone's)."""
        body = {} if principal is None else {"principal": principal}
        return cast(list[Grant], self._pages("list-grants", body, "grants"))

    # The lake tier

    def tier_now(self, table: str) -> dict[str, Any]:
        """Tiers a lake-enabled table at once; returns the lake snapshot (``snapshot_id``, offsets)."""
        return cast(dict[str, Any], self.action("tier-now", {"table": table}))

    def lake_snapshot(self, table: str) -> dict[str, Any]:
        """The table's last lake snapshot; NOT_FOUND before its first tiering round."""
        return cast(dict[str, Any], self.action("lake-snapshot", {"table": table}))

    def compact_lake(self, table: str) -> dict[str, Any]:
        """Compacts the table's lake at once (docs/PROTOCOL.md §7.5)."""
        return cast(dict[str, Any], self.action("compact-lake", {"table": table}))

    # Reading

    def _plan(self, request: dict[str, Any]) -> fl.FlightInfo:
        descriptor = fl.FlightDescriptor.for_command(json.dumps({"scan": request}).encode())
        return self._conn.call(lambda opts: self._conn.flight.get_flight_info(descriptor, options=opts))

    def scan(self, table: str, *, columns: Sequence[str] | None = None, filter: Filter | None = None,
             limit: int | None = None, startup: Startup | None = None, buckets: Sequence[int] | None = None,
             partitions: Sequence[str] | None = None, compression: Compression | None = None,
             parallelism: int = 8) -> pa.RecordBatchReader:
        """Reads a table, or a view, up to its end when planned, as one reader over every bucket.

        The buckets are read at once, `parallelism` at a time; each bucket's batches keep their order, the
        buckets' interleave. Filter, projection and limit are the server's (docs/PROTOCOL.md §4). Streams open at
        the first read; a reader dropped (``del``, or out of scope) before its end cancels them.

        Args:
            table: ``database.table``, ``t$changelog`` or ``t$lake``.
            columns: the columns, in this order; None: all.
            filter: a predicate, e.g. ``{"gt": ["amount", 2]}`` (docs/PROTOCOL.md §4.4).
            limit: at most this many rows.
            startup: ``"full"`` (the default: a log table from its start, through the lake when it has one; a
                primary-key table's current rows), ``"earliest"``, ``"latest"``, a datetime, or offsets.
            buckets: read only these buckets.
            partitions: read only these partitions (their names) of a partitioned table.
            compression: the IPC compression of the batches sent; None: as the table stores them (the fastest).
            parallelism: streams read at once.
        """
        request = _scan_request(table, columns, filter, limit, startup, buckets, partitions, compression)
        return scan_reader(self._conn, self._plan(request), parallelism)

    def to_arrow(self, table: str, **options: Unpack[ScanOptions]) -> pa.Table:
        """`scan` read into a pyarrow Table."""
        return self.scan(table, **options).read_all()

    def to_pandas(self, table: str, **options: Unpack[ScanOptions]) -> pandas.DataFrame:
        """`scan` read into a pandas DataFrame (pandas must be installed)."""
        return self.to_arrow(table, **options).to_pandas()

    def to_polars(self, table: str, **options: Unpack[ScanOptions]) -> polars.DataFrame:
        """`scan` read into a polars DataFrame (polars must be installed)."""
        import polars

        return cast(polars.DataFrame, polars.from_arrow(self.to_arrow(table, **options)))

    def follow(self, table: str, *, columns: Sequence[str] | None = None, filter: Filter | None = None,
               startup: Startup | None = None, buckets: Sequence[int] | None = None,
               partitions: Sequence[str] | None = None, compression: Compression | None = None,
               partition_discovery: float = 60.0) -> Follow:
        """Follows a table (or ``t$changelog``) without end: every bucket's batches as they are written, each
        with its offsets. See `Follow`.

        Args:
            startup: where to start: ``"latest"`` (only new rows), ``"earliest"``, ``"full"`` (the server's
                default), a datetime, or the `Follow.offsets` of an earlier follow, to resume it.
            partition_discovery: seconds between looks for new partitions, when following every partition of a
                partitioned table.
            columns, filter, buckets, partitions, compression: as for `scan`.
        """
        request = _scan_request(table, columns, filter, None, startup, buckets, partitions, compression)
        request["stop"] = "none"
        info = self._plan(request)
        partitioned = "partitions" in plan_meta(info)

        def plan_new(names: list[str]) -> fl.FlightInfo:
            return self._plan({**request, "partitions": names, "startup": "earliest"})

        return Follow(self._conn, info, partitioned, plan_new if partitioned and partitions is None else None,
                      lambda: self.list_partitions(table.split("$")[0]), partition_discovery)

    # Writing

    def writer(self, table: str, *, mode: Literal["append", "upsert", "delete", "changelog"] | None = None,
               columns: Sequence[str] | None = None, writer_id: str | None = None,
               first_sequence: int | None = None, create_partitions: bool | None = None,
               max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> Writer:
        """A writer on one stream to a table, for many writes (see `write` for the arguments)."""
        info = self.describe_table(table)
        schema = self._conn.schema(table)
        request: dict[str, Any] = {"table": table}
        for key, value in (("mode", mode), ("columns", list(columns) if columns is not None else None),
                           ("writer_id", writer_id), ("first_sequence", first_sequence),
                           ("create_partitions", create_partitions)):
            if value is not None:
                request[key] = value
        descriptor = (fl.FlightDescriptor.for_command(json.dumps({"write": request}).encode())
                      if len(request) > 1 else fl.FlightDescriptor.for_path(*table.split(".")))
        return Writer(self._conn, descriptor, schema, write_options(info), max_batch_bytes)

    def write(self, table: str, data: Data, *, mode: Literal["append", "upsert", "delete", "changelog"] | None = None,
              columns: Sequence[str] | None = None, writer_id: str | None = None,
              first_sequence: int | None = None, create_partitions: bool | None = None,
              max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> WriteResult:
        """Writes rows to a table and returns when the server has acknowledged them: applied, durable, visible.

        The data is sent as batches of about `max_batch_bytes` at most, each applied atomically (a pyarrow
        RecordBatch under that size is one). Columns are cast to the table's types by name (a Python int to an
        INT column, pandas' nanoseconds to a TIMESTAMP(3), polars' strings to a STRING), safely: a value that does
        not fit raises. A log table gets the batches compressed as it stores them (its ZSTD or LZ4 codec and
        level), which the server then keeps as received. Each call looks the table up first (its types and
        codec): for many small writes, keep a `writer`.

        Args:
            table: ``database.table``.
            data: a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or polars DataFrame (or anything
                with ``__arrow_c_stream__``), a dict of columns, or a list of rows as dicts.
            mode: ``append`` (log tables) or ``upsert`` (primary-key tables): the default; ``delete`` (the
                primary-key columns); ``changelog`` (a ``_change_type`` column says what each row is).
            columns: a partial update of these columns (with the whole primary key).
            writer_id: an idempotent writer: a retried batch is applied once (docs/PROTOCOL.md §5.3).
            first_sequence: the idempotent writer's first batch's sequence number.
            create_partitions: False refuses rows of a partition that does not exist, instead of creating it.
            max_batch_bytes: the largest batch sent.
        """
        with self.writer(table, mode=mode, columns=columns, writer_id=writer_id, first_sequence=first_sequence,
                         create_partitions=create_partitions, max_batch_bytes=max_batch_bytes) as writer:
            return writer.write(data)

    def undo(self, table: str, offsets: Offsets) -> dict[str, Any]:
        """Brings a primary-key table's named buckets back to their state at these offsets (a sink's checkpoint):
        ``{"undone_keys", "offsets"}`` (docs/PROTOCOL.md §5.4)."""
        return cast(dict[str, Any], self.action("undo", {"table": table, **_offsets_to_json(offsets)}))

    # Lookups

    def lookup(self, table: str, keys: Data, *, columns: Sequence[str] | None = None) -> pa.Table:
        """Looks rows of a primary-key table up by their whole key (the key columns, by name; any `write`
        data). Returns ``_key_index`` (the key's row in `keys`) and the columns (None: all) of each key found, in
        key order; a key not found has no row."""
        return _lookup.lookup(self._conn, table, self._conn.schema(table), keys, columns=columns, prefix=False,
                              insert_if_not_exists=False, create_partitions=None)

    def prefix_lookup(self, table: str, keys: Data, *, columns: Sequence[str] | None = None) -> pa.Table:
        """Looks up every row whose bucket key (and partition keys) is one of `keys`: the index of a primary-key
        table whose bucket key is a prefix of its primary key (docs/PROTOCOL.md §6.2). Returns as `lookup`."""
        return _lookup.lookup(self._conn, table, self._conn.schema(table), keys, columns=columns, prefix=True,
                              insert_if_not_exists=False, create_partitions=None)

    def insert_if_not_exists(self, table: str, keys: Data, *, columns: Sequence[str] | None = None,
                             create_partitions: bool | None = None) -> pa.Table:
        """Looks keys up, inserting those absent as (key, NULLs, a new auto-increment id): a table with an
        auto-increment column is then a global dictionary. Every key has a row. Returns as `lookup`."""
        return _lookup.lookup(self._conn, table, self._conn.schema(table), keys, columns=columns, prefix=False,
                              insert_if_not_exists=True, create_partitions=create_partitions)


def _columns(columns: Mapping[str, str | Column] | Sequence[Column]) -> list[Column]:
    if not isinstance(columns, Mapping):
        return [cast(Column, dict(c)) for c in columns]
    out: list[Column] = []
    for name, column in columns.items():
        if isinstance(column, str):
            sql, not_null = column.strip(), False
            if sql.upper().endswith(" NOT NULL"):
                sql, not_null = sql[:-len(" NOT NULL")].rstrip(), True
            column = {"type": sql, "nullable": False} if not_null else {"type": sql}
        out.append({"name": name, **column})
    return out


def _option_values(options: Mapping[str, str | int | bool]) -> dict[str, str]:
    return {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()}


def _grant(principal: str, operations: Sequence[str], database: str, table: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"principal": principal, "database": database, "operations": list(operations)}
    if table is not None:
        body["table"] = table
    return body


def _at(at: str | datetime.datetime) -> Any:
    if isinstance(at, datetime.datetime):
        return {"timestamp": _millis(at)}
    return at


def _millis(at: datetime.datetime) -> int:
    return int(at.timestamp() * 1000)


def _scan_request(table: str, columns: Sequence[str] | None, filter: Filter | None, limit: int | None,
                  startup: Startup | None, buckets: Sequence[int] | None, partitions: Sequence[str] | None,
                  compression: Compression | None) -> dict[str, Any]:
    request: dict[str, Any] = {"table": table}
    if columns is not None:
        request["columns"] = list(columns)
    if filter is not None:
        request["filter"] = filter
    if limit is not None:
        request["limit"] = limit
    if isinstance(startup, str):
        request["startup"] = startup
    elif isinstance(startup, datetime.datetime):
        request["startup"] = {"timestamp": _millis(startup)}
    elif startup is not None:  # offsets; none named: every bucket from its start
        request["startup"] = _offsets_to_json(startup) if startup else "earliest"
    if buckets is not None:
        request["buckets"] = list(buckets)
    if partitions is not None:
        request["partitions"] = list(partitions)
    if compression is not None:
        request["compression"] = compression
    return request


def _offsets_to_json(offsets: Mapping[int, int] | Mapping[str, Mapping[int, int]]) -> dict[str, Any]:
    """Offsets in the protocol's form: ``{"offsets": {...}}``, or ``{"partition_offsets": {...}}``."""
    if any(isinstance(v, Mapping) for v in offsets.values()):
        parts = cast(Mapping[str, Mapping[int, int]], offsets)
        return {"partition_offsets": {p: {str(b): o for b, o in buckets.items()} for p, buckets in parts.items()}}
    return {"offsets": {str(b): o for b, o in cast(Mapping[int, int], offsets).items()}}


def _offsets_from_json(answer: Mapping[str, Any]) -> Offsets:
    if "partition_offsets" in answer:
        return {p: {int(b): o for b, o in buckets.items()} for p, buckets in answer["partition_offsets"].items()}
    return {int(b): o for b, o in answer.get("offsets", {}).items()}


__all__ = ["Client", "ScanOptions", "connect"]
