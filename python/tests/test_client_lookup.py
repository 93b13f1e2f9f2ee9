"""The package's lookups: point, prefix and insert-if-not-exists, keys of any kind cast to the key's types."""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.flight as fl
import pytest

import fluxgate
from fluxgate import _lookup
from flux import unique


@pytest.fixture(scope="module")
def events(fg):
    """A primary-key table (user, seq) whose bucket key `user` is a prefix of its key: it has a prefix index."""
    table = f"fluss.{unique('events')}"
    fg.create_table(table, {"user": "STRING", "seq": "INT", "v": "DOUBLE"}, primary_key=["user", "seq"],
                    options={"bucket.key": "user", "bucket.num": 2})
    fg.write(table, {"user": ["a", "a", "b"], "seq": [1, 2, 1], "v": [0.5, 1.5, 2.5]})
    return table


def test_lookup_returns_the_rows_found_in_key_order(fg, events):
    got = fg.lookup(events, {"user": ["b", "x", "a"], "seq": [1, 1, 2]})  # seq: int64 cast to INT
    assert got.to_pylist() == [{"_key_index": 0, "user": "b", "seq": 1, "v": 2.5},
                               {"_key_index": 2, "user": "a", "seq": 2, "v": 1.5}]
    assert fg.lookup(events, pd.DataFrame({"user": ["a"], "seq": [1]}), columns=["v"]).to_pylist() == [
        {"_key_index": 0, "v": 0.5}]


def test_lookup_of_no_keys(fg, events):
    got = fg.lookup(events, pa.table({"user": pa.array([], pa.string()), "seq": pa.array([], pa.int32())}))
    assert got.num_rows == 0 and got.schema.names == ["_key_index", "user", "seq", "v"]


def test_prefix_lookup(fg, events):
    got = fg.prefix_lookup(events, [{"user": "a"}, {"user": "z"}, {"user": "b"}], columns=["seq"])
    assert sorted(got.to_pylist(), key=lambda r: (r["_key_index"], r["seq"])) == [
        {"_key_index": 0, "seq": 1}, {"_key_index": 0, "seq": 2}, {"_key_index": 2, "seq": 1}]


def test_lookup_errors_are_the_servers(fg, events):
    with pytest.raises(pa.ArrowInvalid, match="invalid argument"):
        fg.lookup(events, {"user": ["a"]})  # seq is missing
    with pytest.raises(KeyError, match="nope"):
        fg.lookup(events, {"user": ["a"], "seq": [1]}, columns=["nope"])


def test_insert_if_not_exists_is_a_dictionary(fg):
    table = f"fluss.{unique('dict')}"
    fg.create_table(table, {"uid": "STRING", "id": "INT"}, primary_key=["uid"],
                    options={"auto-increment.fields": "id"})
    first = fg.insert_if_not_exists(table, {"uid": ["user_a", "user_b", "user_a"]})
    assert first.to_pylist() == [{"_key_index": 0, "uid": "user_a", "id": 1},
                                 {"_key_index": 1, "uid": "user_b", "id": 2},
                                 {"_key_index": 2, "uid": "user_a", "id": 1}]
    assert fg.insert_if_not_exists(table, {"uid": ["user_c", "user_b"]}, columns=["id"])["id"].to_pylist() == [3, 2]
    assert fg.lookup(table, {"uid": ["user_c"]})["id"].to_pylist() == [3]


def test_insert_if_not_exists_create_partitions(fg):
    table = f"fluss.{unique('dict')}"
    fg.create_table(table, {"uid": "STRING", "dt": "STRING", "id": "BIGINT"}, primary_key=["uid", "dt"],
                    partition_keys=["dt"], options={"auto-increment.fields": "id"})
    keys = {"uid": ["a"], "dt": ["20261201"]}
    assert fg.insert_if_not_exists(table, keys, create_partitions=False).num_rows == 0
    assert fg.list_partitions(table) == []
    assert fg.insert_if_not_exists(table, keys)["id"].to_pylist() == [1]


def test_many_keys_go_in_several_exchanges(fg, events, monkeypatch):
    """Keys over the size of one key batch are split, and each answer's _key_index counts from the first key."""
    monkeypatch.setattr(_lookup, "_MAX_KEY_BYTES", 64)
    users, seqs = ["a", "b", "x", "a"] * 10, [1, 1, 1, 2] * 10
    got = fg.lookup(events, {"user": users, "seq": seqs})
    want = [i for i, (u, s) in enumerate(zip(users, seqs)) if u != "x"]
    assert got["_key_index"].to_pylist() == want
    assert got["v"].to_pylist() == [{"a1": 0.5, "b1": 2.5, "a2": 1.5}[f"{users[i]}{seqs[i]}"] for i in want]


class SlicingServer(fl.FlightServerBase):
    """Answers a key batch with its rows in one-row messages, as a server slicing a large answer does."""

    def get_schema(self, context, descriptor):
        return fl.SchemaResult(pa.schema([("k", pa.int64()), ("v", pa.string())]))

    def do_exchange(self, context, descriptor, reader, writer):
        assert json.loads(descriptor.command)["lookup"]["table"] == "fluss.t"
        keys = reader.read_chunk().data
        answer = pa.record_batch({"_key_index": pa.array(range(keys.num_rows), pa.int32()), "k": keys["k"],
                                  "v": [f"v{k}" for k in keys["k"].to_pylist()]})
        writer.begin(answer.schema)
        for i in range(answer.num_rows):
            writer.write_with_metadata(answer.slice(i, 1), pa.py_buffer(b'{"keys": 3, "rows": 3}'))


def test_every_message_of_an_answer_is_read():
    with SlicingServer("grpc://127.0.0.1:0") as srv:
        with fluxgate.connect(f"127.0.0.1:{srv.port}") as fg:
            got = fg.lookup("fluss.t", {"k": [7, 8, 9]})
    assert got.to_pylist() == [{"_key_index": 0, "k": 7, "v": "v7"}, {"_key_index": 1, "k": 8, "v": "v8"},
                               {"_key_index": 2, "k": 9, "v": "v9"}]
