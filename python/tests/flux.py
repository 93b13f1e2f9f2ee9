"""What the tests call fluxgate with: plain pyarrow.flight, JSON bodies, as a user writes it."""

import json
import uuid

import pyarrow as pa
import pyarrow.flight as fl


def unique(prefix="t"):
    """A table or database name no other test uses, on the session's shared server."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def action(client, name, body, options=None):
    results = list(client.do_action(fl.Action(name, json.dumps(body).encode()), options=options))
    assert len(results) == 1, f"{name}: {len(results)} results"
    return json.loads(results[0].body.to_pybytes())


def create_table(client, table, columns, options=None, **spec):
    cols = [{"name": n, "type": t} if isinstance(t, str) else {"name": n, **t} for n, t in columns.items()]
    return action(client, "create-table", {"table": table, "columns": cols, "options": options or {}, **spec})


def command(body):
    return fl.FlightDescriptor.for_command(json.dumps(body).encode())


def path(table):
    return fl.FlightDescriptor.for_path(*table.split("."))


def put(client, descriptor, *batches, options=None):
    """Writes the batches on one DoPut stream, reading each acknowledgement before the next batch."""
    writer, acks = client.do_put(descriptor, batches[0].schema, options=options)
    results = []
    for b in batches:
        writer.write_batch(b)
        ack = acks.read()
        if ack is None:  # the server ended the call: close() raises its error
            writer.close()
            raise AssertionError("DoPut ended without an acknowledgement or an error")
        results.append(json.loads(ack.to_pybytes()))
    writer.close()
    return results


def read(client, descriptor, options=None):
    """Reads every endpoint; returns the table and the FlightInfo."""
    info = client.get_flight_info(descriptor, options=options)
    tables = [client.do_get(ep.ticket, options=options).read_all() for ep in info.endpoints]
    return pa.concat_tables(tables) if tables else info.schema.empty_table(), info


def scan(client, **request):
    return read(client, command({"scan": request}))[0]
