"""Every error arrives as the pyarrow exception class of its gRPC code, with the server's message.

pyarrow has no class of its own for some codes: it raises ArrowInvalid for INVALID_ARGUMENT, FAILED_PRECONDITION,
OUT_OF_RANGE and RESOURCE_EXHAUSTED (told apart by the message's prefix), KeyError (ArrowKeyError) for NOT_FOUND, and
ArrowException for ALREADY_EXISTS.
"""

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from flux import action, command, create_table, path, put, read, unique


@pytest.fixture(scope="module")
def tables(client):
    log, pk = f"fluss.{unique('log')}", f"fluss.{unique('pk')}"
    create_table(client, log, {"id": "BIGINT", "v": "STRING"})
    create_table(client, pk, {"id": "BIGINT", "v": "STRING"}, primary_key=["id"])
    return log, pk


def batch():
    return pa.record_batch({"id": pa.array([1], pa.int64()), "v": ["x"]})


CASES = [
    ("unknown field", lambda c, log, pk: action(c, "describe-table", {"table": log, "tabel": 1}),
     pa.ArrowInvalid, r"invalid argument.*tabel"),
    ("bad json", lambda c, log, pk: list(c.do_action(fl.Action("list-tables", b"{"))),
     pa.ArrowInvalid, r"invalid argument"),
    ("table not found", lambda c, log, pk: action(c, "describe-table", {"table": "fluss.nope"}),
     pa.lib.ArrowKeyError, r"fluss\.nope"),
    ("column not found", lambda c, log, pk: read(c, command({"scan": {"table": log, "columns": ["nope"]}})),
     pa.lib.ArrowKeyError, r"nope"),
    ("already exists", lambda c, log, pk: create_table(c, log, {"id": "BIGINT"}),
     pa.ArrowException, r"already exists"),
    ("append to a primary-key table", lambda c, log, pk: put(c, command({"write": {"table": pk, "mode": "append"}}),
                                                             batch()),
     pa.ArrowInvalid, r"precondition failed"),
    ("plain-name follow of a primary-key table",
     lambda c, log, pk: read(c, command({"scan": {"table": pk, "stop": "none"}})),
     pa.ArrowInvalid, r"precondition failed.*changelog"),
    ("start above the high watermark",
     lambda c, log, pk: read(c, command({"scan": {"table": log, "startup": {"offsets": {"0": 1000}}}})),
     pa.ArrowInvalid, r"out-of-range.*startup offset 1000 of bucket 0"),
    ("schema mismatch", lambda c, log, pk: put(c, path(log), pa.record_batch({"id": pa.array([1], pa.int32())})),
     pa.ArrowInvalid, r"invalid argument.*id"),
    ("partition key not in the schema", lambda c, log, pk: create_table(c, f"fluss.{unique()}", {"p": "STRING"},
                                                                        partition_keys=["q"]),
     pa.ArrowInvalid, r"invalid argument.*Partition key 'q' does not exist in the schema"),
    ("grant without users", lambda c, log, pk: action(c, "grant", {"principal": "bob", "database": "*",
                                                                   "operations": ["read"]}),
     pa.ArrowInvalid, r"precondition failed"),
]


@pytest.mark.parametrize("name,call,cls,message", CASES, ids=[c[0] for c in CASES])
def test_error_class_and_message(client, tables, name, call, cls, message):
    with pytest.raises(cls, match=message) as info:
        call(client, *tables)
    assert type(info.value) is cls, f"{type(info.value)}: {info.value}"


def test_already_exists_names_the_table(client, tables):
    log, _ = tables
    with pytest.raises(pa.ArrowException, match=r"already exists.*" + log.replace(".", r"\.")):
        create_table(client, log, {"id": "BIGINT"})
