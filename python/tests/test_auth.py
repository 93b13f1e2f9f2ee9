"""TLS, authenticate_basic_token, static bearer tokens and permissions, as a pyarrow user calls them."""

import pyarrow as pa
import pyarrow.flight as fl
import pytest

from flux import action, path, put, read, unique


@pytest.fixture(scope="module")
def connect(tls_server, secured):
    clients = []

    def connect(**kwargs):
        c = fl.connect(tls_server.address, tls_root_certs=secured.ca.read_bytes(), **kwargs)
        clients.append(c)
        return c

    yield connect
    for c in clients:
        c.close()


def create_table_opts(client, table, opts):
    return action(client, "create-table", {"table": table, "columns": [{"name": "id", "type": "BIGINT"}]},
                  options=opts)


def bearer(token):
    return fl.FlightCallOptions(headers=[(b"authorization", b"Bearer " + token.encode())])


def test_basic_token_handshake_then_bearer_calls(connect, secured):
    client = connect()
    header = client.authenticate_basic_token("ann", secured.users["ann"])
    assert header[0] == b"authorization" and header[1].startswith(b"Bearer v1.")
    opts = fl.FlightCallOptions(headers=[header])
    table = f"fluss.{unique()}"
    create_table_opts(client, table, opts)
    put(client, path(table), pa.record_batch({"id": pa.array([1, 2], pa.int64())}), options=opts)
    got, _ = read(client, path(table), options=opts)
    assert sorted(got["id"].to_pylist()) == [1, 2]


def test_static_token_and_grants(connect, secured):
    admin = connect()
    opts = fl.FlightCallOptions(headers=[admin.authenticate_basic_token("ann", secured.users["ann"])])
    table = f"fluss.{unique()}"
    create_table_opts(admin, table, opts)
    svc = bearer(secured.token)
    with pytest.raises(fl.FlightUnauthorizedError, match=f"svc-etl may not read table {table}"):
        read(admin, path(table), options=svc)
    db, name = table.split(".")
    action(admin, "grant", {"principal": "svc-etl", "database": db, "table": name, "operations": ["read"]},
           options=opts)
    got, _ = read(admin, path(table), options=svc)
    assert got.num_rows == 0
    assert action(admin, "list-grants", {"principal": "svc-etl"}, options=opts)["grants"] == [
        {"principal": "svc-etl", "database": db, "table": name, "operations": ["read"]}]
    with pytest.raises(fl.FlightUnauthorizedError, match="svc-etl may not write"):
        put(admin, path(table), pa.record_batch({"id": pa.array([1], pa.int64())}), options=svc)


def test_refused_credentials(connect, secured):
    client = connect()
    with pytest.raises(fl.FlightUnauthenticatedError):
        client.authenticate_basic_token("ann", "wrong")
    with pytest.raises(fl.FlightUnauthenticatedError):
        client.authenticate_basic_token("nobody", "x")
    with pytest.raises(fl.FlightUnauthenticatedError):
        action(client, "list-databases", {})
    with pytest.raises(fl.FlightUnauthenticatedError):
        action(client, "list-databases", {}, options=bearer("v1.forged.token"))
    bob = fl.FlightCallOptions(headers=[client.authenticate_basic_token("bob", secured.users["bob"])])
    with pytest.raises(fl.FlightUnauthorizedError, match="bob may not create"):
        create_table_opts(client, f"fluss.{unique()}", bob)
    with pytest.raises(fl.FlightUnauthorizedError, match="bob may not"):
        action(client, "list-grants", {}, options=bob)


def test_tls_needs_the_certificate(tls_server):
    untrusting = fl.connect(tls_server.address)  # the system roots do not know the self-signed certificate
    with pytest.raises(fl.FlightUnavailableError):
        list(untrusting.list_actions())
    untrusting.close()
    plaintext = fl.connect(tls_server.address.replace("grpc+tls", "grpc"))
    with pytest.raises(fl.FlightUnavailableError):
        list(plaintext.list_actions())
    plaintext.close()
