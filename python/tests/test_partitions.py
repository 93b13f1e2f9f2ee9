"""Partitioned tables as a pyarrow user meets them: rows routed by their partition values, partitions listed and
dropped through actions, a filter on the partition column planned into that partition's endpoints only, and the
partition named in every ticket and batch."""

import json

import pyarrow as pa
import pytest

from flux import action, command, create_table, put, read, scan, unique

DAYS = ["20261130", "20261201", "20261202"]


def events(day, ids):
    return pa.record_batch({"dt": pa.array([day] * len(ids), pa.string()), "id": pa.array(ids, pa.int64())})


@pytest.fixture
def by_day(client):
    table = f"fluss.{unique('by_day')}"
    create_table(client, table, {"dt": "STRING", "id": "BIGINT"}, {"bucket.num": "2"}, partition_keys=["dt"])
    put(client, command({"write": {"table": table}}), *(events(d, list(range(i * 10, i * 10 + 10)))
                                                         for i, d in enumerate(DAYS)))
    return table


def test_writes_create_the_partitions_of_their_rows(client, by_day):
    listed = action(client, "list-partitions", {"table": by_day})["partitions"]
    assert [p["partition_name"] for p in listed] == DAYS
    assert [p["spec"] for p in listed] == [{"dt": d} for d in DAYS]
    assert len({p["partition_id"] for p in listed}) == 3
    assert scan(client, table=by_day).num_rows == 30


def test_filter_on_the_partition_column_plans_only_its_partition(client, by_day):
    got, info = read(client, command({"scan": {"table": by_day, "filter": {"eq": ["dt", DAYS[1]]}}}))
    assert len(info.endpoints) == 2  # the one surviving partition's two buckets
    assert sorted(got.column("id").to_pylist()) == list(range(10, 20))
    meta = json.loads(info.app_metadata)
    assert [p["partition_name"] for p in meta["partitions"]] == [DAYS[1]]

    ticket = json.loads(info.endpoints[0].ticket.ticket)
    assert ticket["partition"] == DAYS[1] and ticket["partition_id"] == meta["partitions"][0]["partition_id"]
    reader = client.do_get(info.endpoints[0].ticket)
    for chunk in reader:
        if chunk.app_metadata is not None:
            assert json.loads(chunk.app_metadata.to_pybytes())["partition"] == DAYS[1]


def test_a_write_to_a_missing_partition_without_dynamic_creation_names_it(client, by_day):
    with pytest.raises(pa.ArrowKeyError, match="not found.*partition dt=20261203 of table .* does not exist"):
        put(client, command({"write": {"table": by_day, "create_partitions": False}}), events("20261203", [1]))
    assert [p["partition_name"] for p in action(client, "list-partitions", {"table": by_day})["partitions"]] == DAYS


def test_offsets_are_per_partition(client, by_day):
    latest = action(client, "list-offsets", {"table": by_day, "at": "latest", "partitions": [DAYS[0]]})
    assert list(latest["partition_offsets"]) == [DAYS[0]]
    assert sum(latest["partition_offsets"][DAYS[0]].values()) == 10


def test_dropped_partition_is_gone_from_listing_and_reads(client, by_day):
    action(client, "drop-partition", {"table": by_day, "partition": {"dt": DAYS[0]}})
    assert [p["partition_name"] for p in action(client, "list-partitions", {"table": by_day})["partitions"]] == DAYS[1:]
    assert sorted(scan(client, table=by_day).column("id").to_pylist()) == list(range(10, 30))
    with pytest.raises(pa.ArrowKeyError, match="not found.*does not exist"):
        action(client, "drop-partition", {"table": by_day, "partition": {"dt": DAYS[0]}})
