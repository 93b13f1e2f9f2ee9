"""The shared vectors of protocol/testdata (the Go package protocol is the contract's source): every action body is
built again by fluxgate.Client and every answer read by it (with a fake connection), commands with flux.py's helpers,
and must come out semantically equal and valid against protocol/schema.json; the actions the client does not send
are the ones vectors.json says, with why; the server refuses every invalid vector with its message, and the Arrow
IPC files hold the schema, rows and body compression the index names."""

import datetime
import functools
import json
import pathlib
import struct

import jsonschema
import pyarrow as pa
import pyarrow.flight as fl
import pyarrow.ipc as ipc
import pytest

import flux
import fluxgate
import fluxgate.client

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "protocol" / "testdata"


def _index():
    # Fail, do not skip: without the vectors this suite checks nothing.
    assert VECTORS.is_dir(), f"no shared vectors at {VECTORS}"
    return json.loads((VECTORS / "vectors.json").read_text())


INDEX = _index()
JSON_VECTORS = [v for v in INDEX["vectors"] if v["compare"] != "rows"]
IPC_VECTORS = [v for v in INDEX["vectors"] if v["compare"] == "rows"]


def without_defaults(doc):
    """doc without the members that hold a default (null, false, an empty array or object, a column's
    "nullable": true): the vectors' rule for semantic equality, since the server reads them as absent."""
    if isinstance(doc, list):
        return [without_defaults(x) for x in doc]
    if not isinstance(doc, dict):
        return doc
    out = {}
    for k, v in doc.items():
        v = without_defaults(v)
        if v is None or v is False or v == [] or v == {} or (k == "nullable" and v is True):
            continue
        out[k] = v
    return out


class FakeClient:
    """Takes what flux.py sends: a GetFlightInfo, answered with no endpoints."""

    def __init__(self):
        self.sent = []

    def get_flight_info(self, descriptor, options=None):
        self.sent.append(("GetFlightInfo", json.loads(descriptor.command)))
        return type("Info", (), {"endpoints": [], "schema": pa.schema([])})()


def sent_command(build):
    c = FakeClient()
    build(c)
    assert [n for n, _ in c.sent] == ["GetFlightInfo"]
    return c.sent[0][1]


class FakeConnection:
    """Stands in for fluxgate.Client's connection: records each action's body and answers it with the next of
    `answers` (the last one again once they run out)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.sent = []
        self.flight = self

    def call(self, fn):
        return fn(None)

    def do_action(self, act, options=None):
        self.sent.append((act.type, json.loads(act.body.to_pybytes())))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        return [type("Result", (), {"body": pa.py_buffer(json.dumps(answer).encode())})()]


def client_with(*answers):
    client = fluxgate.Client.__new__(fluxgate.Client)
    client._conn = FakeConnection(answers)
    return client


def offsets_arg(doc):
    """The offsets argument of undo for a body's offsets or partition_offsets."""
    if "partition_offsets" in doc:
        return {p: {int(b): o for b, o in bs.items()} for p, bs in doc["partition_offsets"].items()}
    return {int(b): o for b, o in doc["offsets"].items()}


def at_arg(at):
    if isinstance(at, dict):
        return datetime.datetime.fromtimestamp(at["timestamp"] / 1000, datetime.timezone.utc)
    return at


def columns_arg(columns):
    return [dict(c) for c in columns]


# Per action, the fluxgate.Client call that sends a body like the vector's (doc) and reads its answer; paged
# listings (LISTINGS) are answered with doc's page token first, so that their second body carries it.
CALLS = {
    "create-database": lambda c, d: c.create_database(d["database"], if_not_exists=d.get("if_not_exists", False)),
    "drop-database": lambda c, d: c.drop_database(d["database"], if_exists=d.get("if_exists", False),
                                                  cascade=d.get("cascade", False)),
    "list-databases": lambda c, d: c.list_databases(),
    "create-table": lambda c, d: c.create_table(
        d["table"], columns_arg(d["columns"]), primary_key=d.get("primary_key"),
        partition_keys=d.get("partition_keys"), options=d.get("options"), comment=d.get("comment"),
        if_not_exists=d.get("if_not_exists", False)),
    "drop-table": lambda c, d: c.drop_table(d["table"], if_exists=d.get("if_exists", False)),
    "describe-table": lambda c, d: c.describe_table(d["table"]),
    "list-tables": lambda c, d: c.list_tables(d.get("database")),
    "alter-table": lambda c, d: c.alter_table(d["table"], set_options=d.get("set"), reset_options=d.get("reset"),
                                              add_columns=columns_arg(d.get("add_columns", []))),
    "list-offsets": lambda c, d: c.list_offsets(d["table"], at_arg(d.get("at", "latest")), buckets=d.get("buckets"),
                                                partitions=d.get("partitions")),
    "lake-snapshot": lambda c, d: c.lake_snapshot(d["table"]),
    "tier-now": lambda c, d: c.tier_now(d["table"]),
    "compact-lake": lambda c, d: c.compact_lake(d["table"]),
    "undo": lambda c, d: c.undo(d["table"], offsets_arg(d)),
    "table-stats": lambda c, d: c.table_stats(d["table"], partitions=d.get("partitions")),
    "grant": lambda c, d: c.grant(d["principal"], d["operations"], database=d["database"], table=d.get("table")),
    "revoke": lambda c, d: c.revoke(d["principal"], d["operations"], database=d["database"], table=d.get("table")),
    "list-grants": lambda c, d: c.list_grants(d.get("principal")),
    "create-partition": lambda c, d: c.create_partition(d["table"], d["partition"],
                                                        if_not_exists=d.get("if_not_exists", False)),
    "drop-partition": lambda c, d: c.drop_partition(d["table"], d["partition"], if_exists=d.get("if_exists", False)),
    "list-partitions": lambda c, d: c.list_partitions(d["table"], d.get("partition")),
}

# The paged listings, by the member of their answer that holds the items.
LISTINGS = {"list-databases": "databases", "list-tables": "tables", "list-grants": "grants",
            "list-partitions": "partitions"}

NOT_SENT = INDEX["not_sent"]["python"]


def sent_body(action, doc):
    """The body fluxgate.Client sends for an action body vector: the last one, for a listing that follows doc's
    page token."""
    if action in LISTINGS and "page_token" in doc:
        client = client_with({LISTINGS[action]: [], "next_page_token": doc["page_token"]}, {LISTINGS[action]: []})
    else:
        client = client_with({LISTINGS[action]: []} if action in LISTINGS else {})
    CALLS[action](client, doc)
    names = {n for n, _ in client._conn.sent}
    assert names == {action}, names
    return client._conn.sent[-1][1]


def read_answer(action, doc):
    """What fluxgate.Client's method returns for an answer vector, and what it must be."""
    # A listing's answer is a page; the next, the last, is empty.
    client = client_with(doc, {LISTINGS[action]: []}) if action in LISTINGS else client_with(doc)
    body = next(v for v in JSON_VECTORS if v["kind"] == "action_body" and v["action"] == action)
    got = CALLS[action](client, json.loads((VECTORS / body["file"]).read_text()))
    if action in LISTINGS:
        return got, doc[LISTINGS[action]]
    if action == "list-offsets":
        return fluxgate.client._offsets_to_json(got), doc
    if got is None:  # an action whose answer the client does not return
        return None, None
    return got, doc


def rebuild(v, doc):
    t = v["type"]
    if t == "Command" and "scan" in doc:
        return sent_command(lambda c: flux.scan(c, **doc["scan"]))
    if t == "Command":
        return json.loads(flux.command(doc).command)
    if v.get("kind") == "action_body":
        return sent_body(v["action"], doc)
    return None


def not_sent(v):
    """Why fluxgate.Client does not send a vector's action, from vectors.json; None when it does."""
    return NOT_SENT["actions"].get(v.get("action"))


@pytest.mark.parametrize("v", JSON_VECTORS, ids=[v["name"] for v in JSON_VECTORS])
def test_json_vector(v):
    doc = json.loads((VECTORS / v["file"]).read_text())
    assert v["compare"] in ("semantic", "bytes")
    validate(v["type"], doc)
    if why := not_sent(v):
        # Stated in vectors.json: the package never names the action, so it cannot send or read it.
        assert v["action"] not in CALLS and f'"{v["action"]}"' not in PACKAGE_SOURCE, why
        return
    if v.get("kind") == "action_answer":
        got, want = read_answer(v["action"], doc)
        assert got == want
        return
    got = rebuild(v, doc)
    if got is None:
        assert v["type"] in INDEX["opaque"] or v["kind"] == "app_metadata" or v["kind"] == "table", v
        assert isinstance(doc, dict), v["file"]
        return
    validate(v["type"], got)
    want = {k: x for k, x in doc.items() if k not in NOT_SENT["fields"]}
    assert without_defaults(got) == without_defaults(want)


def test_python_never_sends_the_fields_it_says_it_does_not():
    for v in JSON_VECTORS:
        if v.get("kind") == "action_body" and not not_sent(v):
            body = sent_body(v["action"], json.loads((VECTORS / v["file"]).read_text()))
            assert not set(body) & set(NOT_SENT["fields"]), (v["name"], body)


SCHEMA = json.loads((VECTORS.parent / "schema.json").read_text())
PACKAGE_SOURCE = "".join(p.read_text() for p in pathlib.Path(fluxgate.__file__).parent.glob("*.py"))


@functools.cache
def _validator(type_name):
    return jsonschema.Draft202012Validator({"$ref": f"#/$defs/{type_name}", **SCHEMA})


def validate(type_name, doc):
    """doc against its definition in protocol/schema.json, the schema generated from the Go types."""
    _validator(type_name).validate(doc)


def test_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_every_action_is_in_the_schema():
    assert set(CALLS) | set(NOT_SENT["actions"]) == set(SCHEMA["actions"])


def test_every_action_has_a_body_and_an_answer_vector():
    bodies = {v["action"] for v in JSON_VECTORS if v["kind"] == "action_body"}
    answers = {v["action"] for v in JSON_VECTORS if v["kind"] == "action_answer"}
    assert bodies == answers and len(bodies) == 24, (bodies, answers)


INVALID = INDEX["invalid"]


@pytest.mark.parametrize("v", INVALID, ids=[v["name"] for v in INVALID])
def test_server_refuses_invalid_vector(client, v):
    """Sent as flux.py sends documents of its type, each invalid vector is INVALID_ARGUMENT with its message."""
    text = (VECTORS / v["file"]).read_text()
    assert v["error"] == "INVALID_ARGUMENT"
    with pytest.raises(pa.ArrowInvalid, match="invalid argument") as e:
        if v["type"] == "Command":
            client.get_flight_info(fl.FlightDescriptor.for_command(text.encode()))
        elif v["type"] == "Ticket":
            client.do_get(fl.Ticket(text.encode())).read_all()
        else:
            list(client.do_action(fl.Action(v["action"], text.encode())))
    assert v["message"] in str(e.value)


def body_compression(path):
    """The body compression of each record batch message in an Arrow IPC file: None, "lz4_frame" or "zstd".
    pyarrow decompresses without saying, so this reads Message.header.compression.codec from the flatbuffer."""
    data = path.read_bytes()
    assert data[:6] == b"ARROW1", path
    reader = ipc.MessageReader.open_stream(pa.py_buffer(data[8:]))
    codecs = []
    for msg in reader:
        if msg.type != "record batch":
            continue
        fb = msg.metadata.to_pybytes()
        batch = _table_field(fb, _root(fb), 2)  # Message.header
        compression = _table_field(fb, batch, 3)  # RecordBatch.compression
        if compression is None:
            codecs.append(None)
            continue
        pos = _field_pos(fb, compression, 0)  # BodyCompression.codec, default LZ4_FRAME
        codecs.append(["lz4_frame", "zstd"][fb[pos] if pos else 0])
    return codecs


def _root(fb):
    return struct.unpack_from("<I", fb, 0)[0]


def _field_pos(fb, table, i):
    vtable = table - struct.unpack_from("<i", fb, table)[0]
    size = struct.unpack_from("<H", fb, vtable)[0]
    if 4 + 2 * i >= size:
        return None
    off = struct.unpack_from("<H", fb, vtable + 4 + 2 * i)[0]
    return table + off if off else None


def _table_field(fb, table, i):
    pos = _field_pos(fb, table, i)
    return pos + struct.unpack_from("<I", fb, pos)[0] if pos else None


def spec_columns(name):
    spec = next(v for v in JSON_VECTORS if v["name"] == name)
    return json.loads((VECTORS / spec["file"]).read_text())


@pytest.mark.parametrize("v", IPC_VECTORS, ids=[v["name"] for v in IPC_VECTORS])
def test_ipc_vector(v):
    path = VECTORS / v["file"]
    table = ipc.open_file(pa.py_buffer(path.read_bytes())).read_all()
    assert table.num_rows == v["rows"]
    spec = spec_columns(v["table"])
    names = v.get("columns") or [c["name"] for c in spec["columns"]]
    assert table.column_names == names
    key = set(spec.get("primary_key", []))
    for field in table.schema:
        if field.name == "_key_index":
            assert field.type == pa.int32() and not field.nullable
            continue
        col = next(c for c in spec["columns"] if c["name"] == field.name)
        assert field.nullable == (col.get("nullable", True) and field.name not in key), field
    want = None if v["compression"] == "none" else v["compression"]
    codecs = body_compression(path)
    assert codecs and all(c == want for c in codecs), codecs


def test_compressed_batches_hold_the_same_rows():
    def rows(name):
        v = next(v for v in IPC_VECTORS if v["name"] == name)
        table = ipc.open_file(pa.py_buffer((VECTORS / v["file"]).read_bytes())).read_all()
        sink = pa.BufferOutputStream()  # uncompressed IPC bytes compare NaN by its bits
        with ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        return sink.getvalue()

    assert rows("batch-all-types").equals(rows("batch-all-types-zstd"))


def test_all_types_cover_every_type_family():
    spec = spec_columns("table-spec-all-types")
    roots = {c["type"].split("(")[0].split("<")[0] for c in spec["columns"]}
    assert roots >= {"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "STRING",
                     "BYTES", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MAP", "ROW"}
