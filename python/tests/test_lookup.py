"""DoExchange lookups: point, prefix and insert-if-not-exists; and the inline lookup of a GetFlightInfo command."""

import json

import pyarrow as pa

from flux import action, command, create_table, path, put, read, unique


def exchange(client, lookup, *key_batches):
    """Sends each key batch on one DoExchange stream and returns the answers as (rows, app_metadata, messages).

    An answer over 4 MiB comes in several messages, "more": true on all but the last (PROTOCOL.md 6.1)."""
    writer, reader = client.do_exchange(command({"lookup": lookup}))
    answers = []
    with writer:
        writer.begin(key_batches[0].schema)
        for keys in key_batches:
            writer.write_batch(keys)
            rows, messages = [], 0
            while True:
                chunk = reader.read_chunk()
                meta = json.loads(chunk.app_metadata.to_pybytes())
                rows += chunk.data.to_pylist()
                messages += 1
                if not meta.pop("more", False):
                    break
            answers.append((rows, meta, messages))
        writer.done_writing()
    return answers


def test_point_and_prefix_lookups(client):
    table = f"fluss.{unique('events')}"
    create_table(client, table, {"user": "STRING", "seq": "BIGINT", "v": "DOUBLE"}, {"bucket.key": "user",
                 "bucket.num": "2"}, primary_key=["user", "seq"])
    put(client, path(table), pa.record_batch({"user": ["a", "a", "b"], "seq": pa.array([1, 2, 1], pa.int64()),
                                              "v": [0.5, 1.5, 2.5]}))

    keys = pa.record_batch({"user": ["b", "x", "a"], "seq": pa.array([1, 1, 2], pa.int64())})
    [(rows, meta, _)] = exchange(client, {"table": table, "columns": ["v"]}, keys)
    assert rows == [{"_key_index": 0, "v": 2.5}, {"_key_index": 2, "v": 1.5}]
    assert meta == {"keys": 3, "rows": 2}

    [(rows, meta, _)] = exchange(client, {"table": table, "prefix": True}, pa.record_batch({"user": ["a", "z"]}))
    assert sorted((r["_key_index"], r["seq"]) for r in rows) == [(0, 1), (0, 2)]
    assert meta == {"keys": 2, "rows": 2}


def test_insert_if_not_exists_is_a_global_dictionary(client):
    table = f"fluss.{unique('dict')}"
    create_table(client, table, {"uid": "STRING", "id": "INT"}, {"auto-increment.fields": "id"},
                 primary_key=["uid"])
    lookup = {"table": table, "insert_if_not_exists": True}
    first, second = exchange(client, lookup, pa.record_batch({"uid": ["user_a", "user_b", "user_a"]}),
                             pa.record_batch({"uid": ["user_c", "user_b"]}))
    assert first == ([{"_key_index": 0, "uid": "user_a", "id": 1}, {"_key_index": 1, "uid": "user_b", "id": 2},
                      {"_key_index": 2, "uid": "user_a", "id": 1}], {"keys": 3, "rows": 3}, 1)
    assert [(r["uid"], r["id"]) for r in second[0]] == [("user_c", 3), ("user_b", 2)]

    # The inline form: keys in the command, one endpoint.
    got, info = read(client, command({"lookup": {"table": table, "keys": [{"uid": "user_b"}, {"uid": "nobody"}]}}))
    assert len(info.endpoints) == 1
    assert got.to_pylist() == [{"_key_index": 0, "uid": "user_b", "id": 2}]
    changes, _ = read(client, path(table + "$changelog"))
    assert sorted(changes["uid"].to_pylist()) == ["user_a", "user_b", "user_c"]
    assert action(client, "describe-table", {"table": table})["options"]["auto-increment.fields"] == "id"


def test_large_answers_come_in_messages_under_4_mib(client):
    """An answer over 4 MiB (gRPC's default message limit) comes in several messages that pyarrow reads as they are."""
    table = f"fluss.{unique('wide')}"
    create_table(client, table, {"k": "BIGINT", "s": "STRING"}, {"bucket.num": "2"}, primary_key=["k"])
    n = 5_000
    put(client, path(table), pa.record_batch({"k": pa.array(range(n), pa.int64()), "s": ["p" * 1000] * n}))
    [(rows, meta, messages)] = exchange(client, {"table": table}, pa.record_batch({"k": pa.array(range(n + 1), pa.int64())}))
    assert meta == {"keys": n + 1, "rows": n}
    assert messages > 1
    assert [r["_key_index"] for r in rows] == list(range(n))
