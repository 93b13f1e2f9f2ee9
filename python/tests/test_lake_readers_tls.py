"""pyiceberg and DuckDB read the lake through the served REST catalog over HTTPS, trusting a private CA with the
settings docs/PROTOCOL.md §7.6 gives; DuckDB returns its TIMESTAMPTZ values as datetimes (which needs pytz)."""

import datetime
import ssl
import time
import urllib.request

import duckdb
import pytest
from pyiceberg.catalog.rest import RestCatalog

import fluxgate
from fluxgate_server import Server, free_port
from test_lake_readers import load_iceberg


@pytest.fixture(scope="module")
def https_lake(tmp_path_factory, secured):
    """A server with TLS and users, its HTTP side on HTTPS, with a tiered table the token svc-etl may read."""
    http = f"127.0.0.1:{free_port()}"
    with Server(tmp_path_factory.mktemp("https-lake") / "data", [*secured.server_args(), "--http", http],
                tls=True) as srv:
        with fluxgate.connect(srv.address, user="ann", password=secured.users["ann"],
                              tls=fluxgate.TLS(ca=secured.ca)) as ann:
            ann.create_table("fluss.clicks", {"user": "STRING"}, options={"table.datalake.enabled": True})
            ann.write("fluss.clicks", {"user": ["ann", "bob"]})
            ann.tier_now("fluss.clicks")
            ann.grant("svc-etl", ["read"], database="fluss")
        context = ssl.create_default_context(cafile=str(secured.ca))
        deadline = time.monotonic() + 30
        while True:  # the HTTP listener opens just after the Flight one
            try:
                urllib.request.urlopen(f"https://{http}/healthz", context=context, timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTPS listener did not open within 30 s"
                time.sleep(0.02)
        yield f"https://{http}/iceberg"


def test_pyiceberg_with_a_private_ca(https_lake, secured, monkeypatch):
    # requests lets these variables win over the catalog's ssl.cabundle.
    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    catalog = RestCatalog("fluxgate", uri=https_lake, token=secured.token, ssl={"cabundle": str(secured.ca)})
    users = catalog.load_table("fluss.clicks").scan(selected_fields=("user",)).to_arrow()
    assert sorted(users["user"].to_pylist()) == ["ann", "bob"]
    from requests.exceptions import SSLError

    with pytest.raises(SSLError):
        RestCatalog("fluxgate", uri=https_lake, token=secured.token)


def duckdb_attached(https_lake, token, settings):
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    load_iceberg(con)
    for setting in settings:
        con.execute(setting)
    con.execute(f"CREATE SECRET (TYPE iceberg, TOKEN '{token}')")
    con.execute(f"ATTACH 'fluxgate' AS lake (TYPE iceberg, ENDPOINT '{https_lake}')")
    return con


def test_duckdb_with_a_private_ca(https_lake, secured):
    con = duckdb_attached(https_lake, secured.token, [f"SET ca_cert_file = '{secured.ca}'"])
    try:
        rows = con.sql("SELECT user, __timestamp FROM lake.fluss.clicks ORDER BY __offset").fetchall()
    finally:
        con.close()
    assert [user for user, _ in rows] == ["ann", "bob"]
    assert all(isinstance(ts, datetime.datetime) and ts.utcoffset() == datetime.timedelta(0) for _, ts in rows)


def test_duckdb_without_the_ca_refuses_the_server(https_lake, secured):
    with pytest.raises(duckdb.IOException, match="SSL peer certificate"):
        duckdb_attached(https_lake, secured.token, []).close()
