"""The shared vectors of protocol/testdata (the Go package protocol is the contract's source): the JSON documents
these tests send are built again with flux.py's helpers and must come out semantically equal, the server refuses
every invalid vector with its message, and the Arrow IPC files hold the schema, rows and body compression the index
names."""

import json
import pathlib
import struct

import pyarrow as pa
import pyarrow.flight as fl
import pyarrow.ipc as ipc
import pytest

import flux

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
    """Takes what flux.py sends: an action, answered {}, or a GetFlightInfo, answered with no endpoints."""

    def __init__(self):
        self.sent = []

    def do_action(self, act, options=None):
        self.sent.append((act.type, json.loads(act.body.to_pybytes())))
        return [type("Result", (), {"body": pa.py_buffer(b"{}")})()]

    def get_flight_info(self, descriptor, options=None):
        self.sent.append(("GetFlightInfo", json.loads(descriptor.command)))
        return type("Info", (), {"endpoints": [], "schema": pa.schema([])})()


def sent_action(name, build):
    c = FakeClient()
    build(c)
    assert [n for n, _ in c.sent] == [name]
    return c.sent[0][1]


def create_table_args(body):
    """flux.create_table's arguments for a create-table body: columns as {name: type or {type, ...}}."""
    body = dict(body)
    columns = {c["name"]: ({k: v for k, v in c.items() if k != "name"} if len(c) > 2 else c["type"])
               for c in body.pop("columns")}
    return body.pop("table"), columns, body.pop("options", None), body


# What flux.py builds, per vector type: the document rebuilt by the helper the tests send it with. Types the
# Python tests send as plain dicts through flux.action are rebuilt that way; tickets and answers are only read.
def rebuild(v, doc):
    t = v["type"]
    if t == "Command" and "scan" in doc:
        return sent_action("GetFlightInfo", lambda c: flux.scan(c, **doc["scan"]))
    if t == "Command":
        return json.loads(flux.command(doc).command)
    if t == "CreateTableRequest":
        table, columns, options, spec = create_table_args(doc)
        return sent_action("create-table", lambda c: flux.create_table(c, table, columns, options, **spec))
    if v.get("kind") == "action_body":
        return sent_action(v["action"], lambda c: flux.action(c, v["action"], doc))
    return None


@pytest.mark.parametrize("v", JSON_VECTORS, ids=[v["name"] for v in JSON_VECTORS])
def test_json_vector(v):
    doc = json.loads((VECTORS / v["file"]).read_text())
    assert v["compare"] in ("semantic", "bytes")
    got = rebuild(v, doc)
    if got is None:
        # A document the server sends (a ticket, app_metadata, an answer): the tests read it as JSON, so it
        # must be a JSON object they can take apart.
        assert isinstance(doc, dict), v["file"]
        return
    assert without_defaults(got) == without_defaults(doc)


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
