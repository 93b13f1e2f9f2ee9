"""Resuming a DoGet stream the server ended because its reader took nothing for the idle timeout (PROTOCOL.md §1,
Limits, and §4.3, Resuming a read); the Go package protocol's ResumeTicket, on tickets as JSON objects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow.flight as fl

_RESOURCE_EXHAUSTED = 8
_ERROR_INFO = b"type.googleapis.com/google.rpc.ErrorInfo"
_DOMAIN, _REASON = b"fluxgate.io", b"STREAM_IDLE"


def ended_idle(err: BaseException) -> bool:
    """Whether err ended a stream for the idle timeout: RESOURCE_EXHAUSTED with the detail google.rpc.ErrorInfo
    {reason: STREAM_IDLE, domain: fluxgate.io}, which pyarrow hands over as the serialized google.rpc.Status in
    FlightError.extra_info."""
    if not isinstance(err, fl.FlightError) or not err.extra_info:
        return False
    try:
        status = list(_fields(err.extra_info))
        if (1, _RESOURCE_EXHAUSTED) not in status:
            return False
        for field, detail in status:
            if field == 3 and isinstance(detail, bytes):
                any_ = dict(_fields(detail))
                if any_.get(1) == _ERROR_INFO and isinstance(value := any_.get(2), bytes):
                    info = list(_fields(value))
                    if (1, _REASON) in info and (2, _DOMAIN) in info:
                        return True
    except ValueError:  # not a google.rpc.Status
        return False
    return False


def _fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """The fields of a protobuf message: (number, value), a varint or the bytes of a length-delimited field."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ValueError("truncated field")
            value, i = buf[i:i + n], i + n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
            continue
        else:
            raise ValueError(f"wire type {wire}")
        yield number, value


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ValueError("bad varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


class ResumeError(Exception):
    """The read cannot resume where it stopped (inside a snapshot, or a lake part of several buckets)."""


_RANGE = ("partition_id", "partition", "bucket", "start", "stop")


def resume_ticket(ticket: dict[str, Any], last: dict[str, Any] | None, rows: int) -> dict[str, Any] | None:
    """The ticket that reads what `ticket` has left after its stream delivered batches up to the one whose
    app_metadata is `last` (None: none), `rows` rows in all: the same read from last's `next` on; None when nothing
    is left. Raises ResumeError where it cannot resume exactly."""
    if last is None:
        return ticket
    t = dict(ticket)
    view = t.get("view")
    if view == "lookup":
        raise ResumeError("an inline lookup cannot resume: look the keys up again")
    if last.get("snapshot"):
        raise ResumeError("a snapshot cannot resume at an offset: read it again")
    if t.get("limit") is not None:
        left = t["limit"] - rows
        if left <= 0:
            return None
        t["limit"] = left
    ranges = [{k: t.get(k) for k in _RANGE}, *t.get("then", [])]
    at = (last.get("partition_id") or 0, last["bucket"])
    i = next((i for i, r in enumerate(ranges) if (r.get("partition_id") or 0, r["bucket"]) == at), None)
    if i is None:
        raise ResumeError(f"batch of bucket {last['bucket']} (partition {last.get('partition')!r}) is not of the "
                          "ticket's ranges")
    cur, rest = dict(ranges[i]), ranges[i + 1:]
    nxt = last["next"]
    if view == "lake" or (view == "union" and nxt < cur["start"]):
        if rest:  # lake_start takes a single range
            raise ResumeError("a lake read of several buckets (a limit) cannot resume: read it again")
        t["lake_start"] = nxt
    elif cur.get("stop") is None or nxt < cur["stop"]:
        # The rest of this range without its snapshot or lake part, which were sent, and the ranges after it with
        # theirs: one ticket cannot say both.
        if (t.get("snapshot") or view == "union") and rest:
            raise ResumeError("a read of several buckets (a limit) cannot resume past a snapshot or lake part: "
                              "read it again")
        cur["start"] = nxt
        t.pop("snapshot", None)
        if view == "union":
            t["view"], t["lake_snapshot_id"] = "log", None
            t.pop("lake_start", None)
    elif not rest:
        return None
    else:  # this range is done: the next one, whole
        cur, rest = rest[0], rest[1:]
    for k in _RANGE:
        if cur.get(k) is not None or k == "stop":
            t[k] = cur.get(k)
        else:
            t.pop(k, None)
    if rest:
        t["then"] = rest
    else:
        t.pop("then", None)
    return t
