"""Reads that resume when the server ends their stream because they took nothing for its idle timeout (PROTOCOL.md
§1, Limits; §4.3, Resuming a read): a reader that pauses longer gets every row exactly once. The resume rules are
the shared vectors of protocol/testdata/resume.json."""

import json
import os
import pathlib
import time
import urllib.request

import pyarrow as pa
import pyarrow.flight as fl
import pytest

import fluxgate
from fluxgate._resume import ResumeError, ended_idle, resume_ticket
from fluxgate_server import Server, free_port

RESUME = json.loads((pathlib.Path(__file__).resolve().parents[2] / "protocol" / "testdata" / "resume.json")
                    .read_text())


def without_defaults(doc):
    """doc without null, false and empty members, as the vectors compare tickets."""
    if isinstance(doc, list):
        return [without_defaults(x) for x in doc]
    if not isinstance(doc, dict):
        return doc
    out = {k: without_defaults(v) for k, v in doc.items()}
    return {k: v for k, v in out.items() if v is not None and v is not False and v != [] and v != {}}


@pytest.mark.parametrize("case", RESUME["cases"], ids=[c["name"] for c in RESUME["cases"]])
def test_resume_ticket_vector(case):
    if case.get("error"):
        with pytest.raises(ResumeError):
            resume_ticket(case["ticket"], case["last"], case["rows"])
        return
    got = resume_ticket(case["ticket"], case["last"], case["rows"])
    assert without_defaults(got) == without_defaults(case["want"])


@pytest.mark.parametrize("case", RESUME["stream_ends"], ids=[c["name"] for c in RESUME["stream_ends"]])
def test_stream_end_vector(case):
    err = fl.FlightInternalError("gRPC returned resource exhausted error", bytes.fromhex(case["details"]))
    assert ended_idle(err) is case["idle"]


# The stalled table: batches of ROWS rows of 1 KiB random (incompressible) bytes, far more than the client's gRPC
# windows and the package's queue hold (pyarrow's grow to megabytes).
BATCHES, ROWS = 320, 64


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory):
    http = free_port()
    with Server(tmp_path_factory.mktemp("idle") / "data",
                ["--stream-idle-timeout", "1s", "--http", f"127.0.0.1:{http}"]) as srv:
        srv.metrics = f"http://127.0.0.1:{http}/metrics"
        yield srv


def write_batches(fg, table, start, n):
    batches = [pa.record_batch({"id": pa.array(range(b * ROWS, (b + 1) * ROWS), pa.int64()),
                                "payload": pa.array([os.urandom(1024) for _ in range(ROWS)], pa.binary())})
               for b in range(start, start + n)]
    fg.write(table, pa.Table.from_batches(batches))


def scans_open(srv):
    with urllib.request.urlopen(srv.metrics, timeout=10) as r:
        lines = r.read().decode().splitlines()
    return sum(float(line.split()[-1]) for line in lines if line.startswith("fluxgate_scans_open"))


def wait_for(what, cond, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"waiting for {what}"
        time.sleep(0.01)


def test_follow_resumes_after_the_idle_timeout(idle_server):
    with fluxgate.connect(idle_server.address) as fg:
        table = "fluss.stalled_follow"
        fg.create_table(table, {"id": "BIGINT", "payload": "BYTES"}, options={"bucket.num": 1})
        write_batches(fg, table, 0, BATCHES)
        seen = {}
        with fg.follow(table, startup="earliest") as follow:
            def take():
                batch = follow.poll(30)
                assert batch is not None, f"the follow stopped after {len(seen)} rows"
                for i in batch.data.column(0).to_pylist():
                    seen[i] = seen.get(i, 0) + 1

            take()
            # The follower takes nothing: the server ends its stream (its only one, open since it sent a batch; the
            # resume opens the next only once the follower takes the batches read before the end).
            wait_for("the server to end the stalled stream", lambda: scans_open(idle_server) == 0)
            write_batches(fg, table, BATCHES, 2)
            while len(seen) < (BATCHES + 2) * ROWS:
                take()
            assert follow.offsets == {0: (BATCHES + 2) * ROWS}
        assert sorted(seen) == list(range((BATCHES + 2) * ROWS))
        assert set(seen.values()) == {1}


def test_scan_resumes_after_the_idle_timeout(idle_server):
    with fluxgate.connect(idle_server.address) as fg:
        table = "fluss.stalled_scan"
        fg.create_table(table, {"id": "BIGINT", "payload": "BYTES"}, options={"bucket.num": 1})
        write_batches(fg, table, 0, BATCHES)
        reader = fg.scan(table)
        ids = reader.read_next_batch().column(0).to_pylist()
        wait_for("the server to end the stalled stream", lambda: scans_open(idle_server) == 0)
        ids += reader.read_all().column(0).to_pylist()
        assert sorted(ids) == list(range(BATCHES * ROWS))
