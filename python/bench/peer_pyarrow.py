"""One timed run of the JetStream peer's pyarrow workloads (bench/peers/jetstream --pyarrow), against the fluxgate
server the peer runs. The peer runs this script once per run and reads the one line of JSON it prints:
{"rows": n, "seconds": s}, the time of the run alone (not of starting Python or reading the data file).

    append ADDRESS TABLE FILE COMPRESSION  the batches of the Arrow IPC file FILE through one DoPut, with
                                           IpcWriteOptions(compression=COMPRESSION) ("zstd", "lz4" or "none"),
                                           waiting for every acknowledgement
    read ADDRESS TABLE COMPRESSION         every endpoint of a scan of TABLE, each on its own thread (as the Go
                                           client's Scan reads them), each batch decoded; COMPRESSION is the
                                           scan's "compression" ("" for as stored)
    profile ADDRESS FILE CODEC REPS        where the time of append and read goes, and what a user can change:
                                           each variant once per rep, interleaved, medians printed; makes and
                                           drops its own tables (CODEC: the table's, "zstd" or "lz4_frame"); run
                                           by hand against a fluxgate serve, FILE kept by the peer's --pyarrow-data
"""

import itertools
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.flight as fl


def append(client, table, path, compression):
    with pa.OSFile(path, "rb") as f:
        data = pa.ipc.open_file(f).read_all()
    options = pa.ipc.IpcWriteOptions(compression=None if compression == "none" else compression)
    seconds, _ = put_split(client, table, data.to_batches(), options)
    return data.num_rows, seconds


def read(client, table, compression):
    scan = {"table": table}
    if compression:
        scan["compression"] = compression
    start = time.perf_counter()
    info = client.get_flight_info(fl.FlightDescriptor.for_command(json.dumps({"scan": scan}).encode()))

    def rows_of(ep):
        return sum(chunk.data.num_rows for chunk in client.do_get(ep.ticket))

    with ThreadPoolExecutor(len(info.endpoints)) as pool:
        rows = sum(pool.map(rows_of, info.endpoints))
    return rows, time.perf_counter() - start


NARROW = [("ts", "BIGINT"), ("seq", "BIGINT"), ("device", "BIGINT"), ("count", "BIGINT"),
          ("value", "DOUBLE"), ("ratio", "DOUBLE"), ("site", "STRING"), ("status", "STRING")]


def action(client, name, body):
    return [r.body.to_pybytes() for r in client.do_action(fl.Action(name, json.dumps(body).encode()))]


def encode(batches, options):
    """Only what pyarrow does before sending: the IPC stream, compressed by options, into memory."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batches[0].schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue()


def put_split(client, table, batches, options):
    """One DoPut of batches, waiting for every acknowledgement; the time of the writes (compression and sending)
    apart from the wait for the acknowledgements."""
    start = time.perf_counter()
    writer, acks = client.do_put(fl.FlightDescriptor.for_path(*table.split(".")), batches[0].schema,
                                 options=fl.FlightCallOptions(write_options=options))
    for b in batches:
        writer.write_batch(b)
    writer.done_writing()
    written = time.perf_counter()
    for acked in range(len(batches)):
        if acks.read() is None:
            raise SystemExit(f"the server acknowledged {acked} of {len(batches)} batches")
    writer.close()
    return time.perf_counter() - start, {"writes": written - start, "acks": time.perf_counter() - written}


def put_parallel(client, table, batches, options, streams):
    """streams DoPuts on threads, each with every streams-th batch."""
    start = time.perf_counter()
    with ThreadPoolExecutor(streams) as pool:
        list(pool.map(lambda i: put_split(client, table, batches[i::streams], options), range(streams)))
    return time.perf_counter() - start, {}


def read_split(client, table, want, compression, how, read_options=None):
    """The scan's endpoints read per batch or with read_all, on threads or one after another; want rows."""
    scan = {"table": table}
    if compression:
        scan["compression"] = compression
    options = fl.FlightCallOptions(read_options=read_options) if read_options else None
    start = time.perf_counter()
    info = client.get_flight_info(fl.FlightDescriptor.for_command(json.dumps({"scan": scan}).encode()))

    def rows_of(ep):
        reader = client.do_get(ep.ticket, options=options)
        if how.startswith("read_all"):
            return reader.read_all().num_rows
        return sum(chunk.data.num_rows for chunk in reader)

    if how.endswith("serial"):
        rows = sum(map(rows_of, info.endpoints))
    else:
        with ThreadPoolExecutor(len(info.endpoints)) as pool:
            rows = sum(pool.map(rows_of, info.endpoints))
    if rows != want:
        raise SystemExit(f"read {rows} rows, want {want}")
    return time.perf_counter() - start, {}


def profile(client, path, codec, reps):
    with pa.OSFile(path, "rb") as f:
        data = pa.ipc.open_file(f).read_all()
    batches = data.to_batches()
    big = pa.Table.from_batches(batches).combine_chunks().to_batches(max_chunksize=32_768)
    name = {"zstd": "zstd", "lz4_frame": "lz4"}[codec]
    as_peer = pa.ipc.IpcWriteOptions(compression=name)
    fast = pa.ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=-1)) if name == "zstd" else None
    serial = pa.ipc.IpcWriteOptions(compression=name, use_threads=False)
    none = pa.ipc.IpcWriteOptions(compression=None)
    compressed, uncompressed = encode(batches, as_peer), encode(batches, none)
    tables = itertools.count()

    def fresh():
        t = f"fluss.prof_{next(tables)}"
        action(client, "create-table", {"table": t, "columns": [{"name": n, "type": ty} for n, ty in NARROW],
                                        "options": {"bucket.num": "4", "table.log.arrow.compression.type": codec}})
        return t

    def timed(f):
        start = time.perf_counter()
        f()
        return time.perf_counter() - start, {}

    def appended(put):
        def run():
            t = fresh()
            got = put(t)
            action(client, "drop-table", {"table": t})
            return got
        return run

    last = {}

    def peer_append():
        if "table" in last:
            action(client, "drop-table", {"table": last["table"]})
        last["table"] = fresh()
        return put_split(client, last["table"], batches, as_peer)

    def read(how, compression="", read_options=None):
        return lambda: read_split(client, last["table"], data.num_rows, compression, how, read_options)

    no_threads = pa.ipc.IpcReadOptions(use_threads=False)
    variants = [
        (f"encode only, {name} (IpcWriteOptions default: use_threads)", lambda: timed(lambda: encode(batches, as_peer))),
        *([("encode only, zstd level -1 (1 is Arrow's default)", lambda: timed(lambda: encode(batches, fast)))]
          if fast else []),
        (f"encode only, {name}, use_threads=False", lambda: timed(lambda: encode(batches, serial))),
        ("encode only, uncompressed", lambda: timed(lambda: encode(batches, none))),
        (f"append, {name}, one do_put (the peer's)", peer_append),
        *([("append, zstd level -1, one do_put", appended(lambda t: put_split(client, t, batches, fast)))]
          if fast else []),
        (f"append, {name}, use_threads=False", appended(lambda t: put_split(client, t, batches, serial))),
        (f"append, {name}, 32768-row batches", appended(lambda t: put_split(client, t, big, as_peer))),
        (f"append, {name}, 4 do_put streams on threads", appended(lambda t: put_parallel(client, t, batches, as_peer, 4))),
        ("read, endpoints on threads, per batch (the peer's)", read("batches")),
        ("read, endpoints on threads, read_all", read("read_all")),
        ("read, endpoints one after another, read_all", read("read_all serial")),
        ("read, IpcReadOptions(use_threads=False)", read("batches", read_options=no_threads)),
        ("read, use_threads=False, one after another", read("batches serial", read_options=no_threads)),
        ('read, "compression": "none"', read("batches", compression="none")),
        (f"decode only, {name} IPC stream from memory", lambda: timed(lambda: pa.ipc.open_stream(compressed).read_all())),
        ("decode only, uncompressed IPC stream from memory", lambda: timed(lambda: pa.ipc.open_stream(uncompressed).read_all())),
    ]
    runs = {v: [] for v, _ in variants}
    for _ in range(reps):
        for v, f in variants:
            cpu = time.process_time()
            seconds, parts = f()
            runs[v].append((seconds, {**parts, "pyarrow CPU": time.process_time() - cpu}))
    action(client, "drop-table", {"table": last["table"]})
    print(f"{data.num_rows} rows, {len(batches)} batches; {name} stream {compressed.size / 1e6:.1f} MB, "
          f"uncompressed {uncompressed.size / 1e6:.1f} MB; medians of {reps}")
    for v, samples in runs.items():
        samples.sort(key=lambda s: s[0])
        seconds, parts = samples[len(samples) // 2]
        split = ", ".join(f"{k} {s:.2f} s" for k, s in parts.items())
        print(f"{v:<60} {seconds:6.2f} s  {data.num_rows / seconds / 1e6:6.2f} M rows/s  {split}")


def main(argv):
    what, address = argv[1], argv[2]
    client = fl.FlightClient(f"grpc://{address}")
    if what == "append":
        rows, seconds = append(client, argv[3], argv[4], argv[5])
    elif what == "read":
        rows, seconds = read(client, argv[3], argv[4])
    elif what == "profile":
        return profile(client, argv[3], argv[4], int(argv[5]))
    else:
        raise SystemExit(f"unknown workload {what!r}: want append, read or profile")
    print(json.dumps({"rows": rows, "seconds": seconds}))


if __name__ == "__main__":
    main(sys.argv)
