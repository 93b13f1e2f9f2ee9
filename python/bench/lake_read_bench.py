"""pyiceberg reading a primary-key table's lake after many small tiering rounds, before and after compact-lake.

Each round upserts --rows-per-round rows, one in ten updating a key of an earlier round, and tiers them; the lake
then holds a data file and a position-delete file per bucket and round. pyiceberg reads it from its metadata file
(StaticTable, scan().to_arrow()), then the lake is compacted, and the snapshots before and after the compaction are read alternately. Prints the
medians and the ratio.

    make build venv
    FLUXGATE_BIN=$PWD/bin/fluxgate python/.venv/bin/python python/bench/lake_read_bench.py [--rounds 100] [--runs 5]
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as fl
from pyiceberg.table import StaticTable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fluxgate_server import Server  # noqa: E402


def action(client, name, body):
    return json.loads(list(client.do_action(fl.Action(name, json.dumps(body).encode())))[0].body.to_pybytes())


def read(metadata_file):
    start = time.perf_counter()
    rows = StaticTable.from_metadata(metadata_file).scan().to_arrow().num_rows
    return time.perf_counter() - start, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--rows-per-round", type=int, default=2_000)
    ap.add_argument("--buckets", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Server(Path(tmp) / "data") as srv:
        client = fl.connect(srv.address)
        table = "fluss.lake_read"
        cols = [{"name": "id", "type": "BIGINT"}, {"name": "user", "type": "STRING"}, {"name": "amount", "type": "DOUBLE"}]
        action(client, "create-table", {"table": table, "columns": cols, "primary_key": ["id"], "options": {
            "bucket.num": str(args.buckets), "table.datalake.enabled": "true", "table.datalake.freshness": "1h"}})
        n = args.rows_per_round
        for r in range(args.rounds):
            ids = [r * n + i if i % 10 else (r * n + i) // 2 for i in range(n)]  # one in ten: an earlier key
            batch = pa.record_batch({"id": pa.array(ids, pa.int64()), "user": [f"u{i % 997}" for i in ids],
                                     "amount": pa.array([float(r)] * n)})
            writer, acks = client.do_put(fl.FlightDescriptor.for_path("fluss", "lake_read"), batch.schema)
            writer.write_batch(batch)
            acks.read()
            writer.close()
            action(client, "tier-now", {"table": table})
        lake = str(Path(srv.data) / "lake" / "fluss" / "lake_read")
        uncompacted = StaticTable.from_metadata(lake)
        compacted = action(client, "compact-lake", {"table": table})
        done = StaticTable.from_metadata(lake)
        # The snapshot before the compaction stays readable: the two reads alternate, under the same load.
        before, after, counts = [], [], set()
        for _ in range(args.runs):
            for times, t in ((before, uncompacted), (after, done)):
                d, rows = read(t.metadata_location)
                times.append(d)
                counts.add(rows)
        assert len(counts) == 1, f"the reads disagree on the row count: {counts}"
        rows_before = counts.pop()
        b, a = statistics.median(before), statistics.median(after)
        print(f"{args.rounds} rounds of {n} rows ({args.buckets} buckets): {rows_before} rows")
        print(f"before compaction: {len(uncompacted.inspect.files())} data and delete files, pyiceberg read {b * 1000:.0f} ms")
        print(f"after compaction:  {len(done.inspect.files())} files ({compacted['rewritten_files']} rewritten, "
              f"{compacted['removed_delete_files']} delete files dropped), pyiceberg read {a * 1000:.0f} ms")
        print(f"medians of {args.runs} alternating reads; ratio (before / after): {b / a:.2f}")
        client.close()


if __name__ == "__main__":
    main()
