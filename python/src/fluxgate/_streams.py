"""Reading many DoGet streams at once: a thread per stream, their batches into one bounded queue."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.flight as fl

from ._connection import Connection
from ._resume import ResumeError, ended_idle, resume_ticket


@dataclass(frozen=True)
class Chunk:
    """A batch as a stream delivered it, with its app_metadata (PROTOCOL.md §4.3)."""

    data: pa.RecordBatch
    meta: dict[str, Any]


class _Done:
    """A worker read all its tickets."""


class Streams:
    """Reads tickets on worker threads; `get` returns their batches in arrival order. Batches of one stream keep
    their order. The queue holds at most `capacity` batches, so a slow consumer slows the streams (through gRPC's
    flow control) instead of filling memory. A stream's error is raised by `get`."""

    def __init__(self, conn: Connection, capacity: int, bounded: bool) -> None:
        self._conn, self._bounded = conn, bounded
        self._queue: queue.Queue[Chunk | BaseException | _Done] = queue.Queue(capacity)
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._readers: list[fl.FlightStreamReader] = []
        self._threads: list[threading.Thread] = []
        self.running = 0  # workers that have not yet finished, as seen by the consumer

    def start(self, tickets: Iterable[fl.Ticket], workers: int) -> None:
        """Reads `tickets` on `workers` threads, each taking the next unread ticket when its stream ends."""
        pending = iter(list(tickets))
        for _ in range(workers):
            thread = threading.Thread(target=self._work, args=(pending,), daemon=True, name="fluxgate-stream")
            with self._lock:
                if self._stopped.is_set():
                    return
                self._threads.append(thread)
                self.running += 1
            thread.start()

    def _work(self, pending: Iterator[fl.Ticket]) -> None:
        try:
            while not self._stopped.is_set():
                with self._lock:
                    ticket = next(pending, None)
                if ticket is None:
                    break
                self._read(ticket)
        except BaseException as err:  # handed to the consumer, who raises it
            if not self._stopped.is_set():
                self._queue.put(err)
        finally:
            self._queue.put(_Done())

    def _read(self, ticket: fl.Ticket) -> None:
        """Reads a ticket to its end. When the server ends the stream because it took nothing for the idle timeout
        (the consumer did not take batches), it opens the read again after the batches it queued (PROTOCOL.md §4.3,
        Resuming a read): no batch comes twice or is missed."""
        raw, last, rows = ticket.ticket, None, 0
        while True:
            reader = self._conn.flight.do_get(fl.Ticket(raw), options=self._conn.options())
            with self._lock:
                self._readers.append(reader)
                if self._stopped.is_set():
                    reader.cancel()
                    return
            try:
                while not self._stopped.is_set():
                    try:
                        chunk = reader.read_chunk()
                    except StopIteration:
                        return
                    if chunk.data is not None:
                        meta = json.loads(chunk.app_metadata.to_pybytes()) if chunk.app_metadata is not None else {}
                        self._queue.put(Chunk(chunk.data, meta))
                        last, rows = meta or last, rows + chunk.data.num_rows
                return
            except fl.FlightError as err:
                if not ended_idle(err):
                    raise
                try:
                    rest = resume_ticket(json.loads(raw), last, rows)
                except ResumeError as why:
                    raise ResumeError(f"{err}; not resumed: {why}") from err
                if rest is None:
                    return
                raw, last, rows = json.dumps(rest, separators=(",", ":")).encode(), None, 0

    def fail(self, err: BaseException) -> None:
        """Hands an error of the caller's own (a partition discovery's) to the consumer, as a stream's."""
        self._queue.put(err)

    def get(self, timeout: float | None = None) -> Chunk | None:
        """The next batch; None after `timeout` seconds without one, or, for bounded streams, when every worker
        has finished."""
        while self.running or not self._bounded:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                return None
            if isinstance(item, _Done):
                with self._lock:
                    self.running -= 1
                if not self._bounded:  # a follow ends only when cancelled
                    self.close()
                    raise ConnectionAbortedError("the server ended a followed stream (it may be shutting down): "
                                                 "follow again from the offsets read")
            elif isinstance(item, BaseException):
                self.close()
                raise item
            else:
                return item
        return None

    def close(self) -> None:
        """Cancels the streams and waits for the workers, taking what they still hand over so that none blocks."""
        with self._lock:
            self._stopped.set()
            readers, threads = list(self._readers), list(self._threads)
        for reader in readers:
            reader.cancel()
        for thread in threads:
            while thread.is_alive():
                try:
                    self._queue.get(timeout=0.05)
                except queue.Empty:
                    pass
                thread.join(timeout=0.05)
        self.running = 0
