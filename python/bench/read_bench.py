"""pyarrow read_all of every endpoint of a table: a ZSTD table (the default) read plainly (for_path: the batches go
as stored and pyarrow decompresses them) and asking for "compression": "none" (the server decompresses), against
the same read of an uncompressed table and of an in-process no-op pyarrow Flight server that serves the same batches
from memory. Prints rows/s and the ratios.

    make build venv
    FLUXGATE_BIN=$PWD/bin/fluxgate python/.venv/bin/python python/bench/read_bench.py [--rows 2000000] [--runs 5]

Each read is measured with the endpoints read one after the other and each on its own thread.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.flight as fl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fluxgate_server import Server  # noqa: E402

COLUMNS = [{"name": "id", "type": "BIGINT"}, {"name": "user", "type": "STRING"}, {"name": "amount", "type": "DOUBLE"},
           {"name": "ts", "type": "TIMESTAMP_LTZ(3)"}, {"name": "qty", "type": "INT"}]


class NoopServer(fl.FlightServerBase):
    """Serves the same batches from memory: ticket i streams bucket i's table, chunk by chunk."""

    def __init__(self, buckets):
        super().__init__("grpc://127.0.0.1:0")
        self.buckets = buckets

    def do_get(self, context, ticket):
        return fl.RecordBatchStream(self.buckets[int(ticket.ticket)])


def batches(rows, batch_rows):
    rng = np.random.default_rng(7)
    for start in range(0, rows, batch_rows):
        n = min(batch_rows, rows - start)
        yield pa.record_batch({
            "id": pa.array(np.arange(start, start + n), pa.int64()),
            "user": pa.array([f"user-{u}" for u in rng.integers(0, 10_000, n)], pa.string()),
            "amount": pa.array(np.round(rng.gamma(2.0, 20.0, n), 2), pa.float64()),
            "ts": pa.array(1_796_000_000_000 + np.arange(start, start + n) * 10, pa.timestamp("ms", tz="UTC")),
            "qty": pa.array(rng.integers(1, 10, n), pa.int32()),
        })


def action(client, name, body):
    return json.loads(list(client.do_action(fl.Action(name, json.dumps(body).encode())))[0].body.to_pybytes())


def read_tickets(client, tickets, parallel):
    """read_all of each ticket, one after the other or each on its own thread; returns the rows read."""
    def read(ticket):
        return client.do_get(ticket).read_all().num_rows
    if not parallel:
        return sum(map(read, tickets))
    with ThreadPoolExecutor(len(tickets)) as pool:
        return sum(pool.map(read, tickets))


def read_every_endpoint(client, descriptor, parallel):
    return read_tickets(client, [ep.ticket for ep in client.get_flight_info(descriptor).endpoints], parallel)


def measure(reads, rows, runs):
    """Times each read runs times, the reads taking turns so that the machine's load swings hit them alike;
    returns each read's rows/s at its median and at its best time (the best is the least disturbed by load)."""
    times = {name: [] for name in reads}
    for read in reads.values():
        read()  # warm up: connections, page cache
    for _ in range(runs):
        for name, read in reads.items():
            start = time.perf_counter()
            got = read()
            times[name].append(time.perf_counter() - start)
            assert got == rows, f"{name}: read {got} rows, want {rows}"
    for name, ts in times.items():
        print(f"{name:<45} {rows / statistics.median(ts) / 1e6:6.2f} M rows/s median, "
              f"{rows / min(ts) / 1e6:6.2f} best  ({min(ts):.3f}-{max(ts):.3f} s)")
    return {name: (rows / statistics.median(ts), rows / min(ts)) for name, ts in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--batch-rows", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp, Server(Path(tmp) / "data") as srv:
        client = fl.connect(srv.address)
        options = {"bucket.num": str(args.buckets), "bucket.key": "id"}
        for table, compression in [("zstd_t", "zstd"), ("none_t", "none")]:
            action(client, "create-table", {"table": f"fluss.{table}", "columns": COLUMNS,
                                            "options": {**options, "table.log.arrow.compression.type": compression}})
            writer, acks = client.do_put(fl.FlightDescriptor.for_path("fluss", table),
                                         next(batches(1, 1)).schema)
            for b in batches(args.rows, args.batch_rows):
                writer.write_batch(b)
                acks.read()
            writer.close()

        # The no-op server holds exactly what fluxgate sends for the uncompressed table, bucket by bucket.
        info = client.get_flight_info(fl.FlightDescriptor.for_path("fluss", "none_t"))
        noop = NoopServer([client.do_get(ep.ticket).read_all() for ep in info.endpoints])
        noop_client = fl.connect(f"grpc://127.0.0.1:{noop.port}")
        noop_tickets = [fl.Ticket(str(i).encode()) for i in range(len(info.endpoints))]

        def scan(table, **request):
            return fl.FlightDescriptor.for_command(json.dumps({"scan": {"table": table, **request}}).encode())

        print(f"{args.rows} rows, {args.buckets} buckets, batches of {args.batch_rows}, pyarrow {pa.__version__}")
        for parallel in [False, True]:
            print(f"-- endpoints {'in parallel' if parallel else 'one after the other'}, median of {args.runs}")
            r = measure({
                "no-op pyarrow Flight server": lambda parallel=parallel: read_tickets(noop_client, noop_tickets, parallel),
                "uncompressed table": lambda parallel=parallel: read_every_endpoint(
                    client, fl.FlightDescriptor.for_path("fluss", "none_t"), parallel),
                "ZSTD table, for_path (as stored)": lambda parallel=parallel: read_every_endpoint(
                    client, fl.FlightDescriptor.for_path("fluss", "zstd_t"), parallel),
                'ZSTD table, "compression": "none"': lambda parallel=parallel: read_every_endpoint(
                    client, scan("fluss.zstd_t", compression="none"), parallel),
            }, args.rows, args.runs)
            noop_r, none_r = r["no-op pyarrow Flight server"], r["uncompressed table"]
            for name, (median, best) in list(r.items())[1:]:
                print(f"   {name:<42} median {median / none_r[0]:.2f}x uncompressed, {median / noop_r[0]:.2f}x no-op;"
                      f"  best {best / none_r[1]:.2f}x, {best / noop_r[1]:.2f}x")
        noop_client.close()
        noop.shutdown()
        client.close()


if __name__ == "__main__":
    main()
