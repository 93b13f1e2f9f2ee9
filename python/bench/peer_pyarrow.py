"""One timed run of the JetStream peer's pyarrow workloads (bench/peers/jetstream --pyarrow), against the fluxgate
server the peer runs. The peer runs this script once per run and reads the one line of JSON it prints:
{"rows": n, "seconds": s}, the time of the run alone (not of starting Python or reading the data file).

    append ADDRESS TABLE FILE COMPRESSION  the batches of the Arrow IPC file FILE through one DoPut, with
                                           IpcWriteOptions(compression=COMPRESSION) ("zstd", "lz4" or "none"),
                                           waiting for every acknowledgement
    read ADDRESS TABLE COMPRESSION         every endpoint of a scan of TABLE, each on its own thread (as the Go
                                           client's Scan reads them), each batch decoded; COMPRESSION is the
                                           scan's "compression" ("" for as stored)
"""

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.flight as fl


def append(client, table, path, compression):
    with pa.OSFile(path, "rb") as f:
        data = pa.ipc.open_file(f).read_all()
    batches = data.to_batches()
    options = fl.FlightCallOptions(write_options=pa.ipc.IpcWriteOptions(
        compression=None if compression == "none" else compression))
    start = time.perf_counter()
    writer, acks = client.do_put(fl.FlightDescriptor.for_path(*table.split(".")), data.schema, options=options)
    for b in batches:
        writer.write_batch(b)
    writer.done_writing()
    acked = 0
    while acked < len(batches):
        if acks.read() is None:
            raise SystemExit(f"the server acknowledged {acked} of {len(batches)} batches")
        acked += 1
    writer.close()
    return data.num_rows, time.perf_counter() - start


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


def main(argv):
    what, address = argv[1], argv[2]
    client = fl.FlightClient(f"grpc://{address}")
    if what == "append":
        rows, seconds = append(client, argv[3], argv[4], argv[5])
    elif what == "read":
        rows, seconds = read(client, argv[3], argv[4])
    else:
        raise SystemExit(f"unknown workload {what!r}: want append or read")
    print(json.dumps({"rows": rows, "seconds": seconds}))


if __name__ == "__main__":
    main(sys.argv)
