"""The package over TLS with a private CA, with users, tokens and grants, and with a client certificate."""

import datetime

import pyarrow as pa
import pyarrow.flight as fl
import pytest

import fluxgate
from fluxgate_server import Server
from flux import unique


@pytest.fixture(scope="module")
def tls(secured):
    return fluxgate.TLS(ca=secured.ca)


def test_user_and_password_over_tls(tls_server, secured, tls):
    with fluxgate.connect(tls_server.address, user="ann", password=secured.users["ann"], tls=tls) as ann:
        table = f"fluss.{unique()}"
        ann.create_table(table, {"id": "BIGINT"})
        ann.write(table, {"id": [1, 2]})
        assert sorted(ann.to_arrow(table)["id"].to_pylist()) == [1, 2]


def test_bare_address_with_tls_and_pem_bytes(tls_server, secured):
    host_port = tls_server.address.removeprefix("grpc+tls://")
    with fluxgate.connect(host_port, user="ann", password=secured.users["ann"],
                          tls=fluxgate.TLS(ca=secured.ca.read_bytes())) as ann:
        assert "fluss" in ann.list_databases()


def test_without_the_ca_the_server_is_not_trusted(tls_server, secured):
    with pytest.raises(fl.FlightError):  # the handshake fails
        fluxgate.connect(tls_server.address, user="ann", password=secured.users["ann"])
    with fluxgate.connect(tls_server.address, token=secured.token) as untrusting:
        with pytest.raises(fl.FlightUnavailableError):
            untrusting.list_databases()


def test_wrong_password_and_no_credentials(tls_server, secured, tls):
    with pytest.raises(fl.FlightUnauthenticatedError):
        fluxgate.connect(tls_server.address, user="ann", password="wrong", tls=tls)
    with fluxgate.connect(tls_server.address, tls=tls) as anonymous:
        with pytest.raises(fl.FlightUnauthenticatedError):
            anonymous.list_databases()


def test_a_refused_token_makes_the_client_shake_hands_again(tls_server, secured, tls):
    """A handshake token expires (serve --token-ttl); a client with a password gets a new one and goes on."""
    with fluxgate.connect(tls_server.address, user="ann", password=secured.users["ann"], tls=tls) as ann:
        ann._conn._headers = [(b"authorization", b"Bearer v1.expired.token")]
        assert "fluss" in ann.list_databases()
        assert ann._conn._headers[0][1].startswith(b"Bearer v1.") and b"expired" not in ann._conn._headers[0][1]


def test_static_token_and_grants(tls_server, secured, tls):
    with fluxgate.connect(tls_server.address, user="ann", password=secured.users["ann"], tls=tls) as ann, \
            fluxgate.connect(tls_server.address, token=secured.token, tls=tls) as svc:
        db = unique("db")
        ann.create_database(db)
        table = f"{db}.t"
        ann.create_table(table, {"id": "BIGINT"})
        with pytest.raises(fl.FlightUnauthorizedError, match=f"svc-etl may not read table {table}"):
            svc.to_arrow(table)
        ann.grant("svc-etl", ["read", "write"], database=db)
        ann.grant("svc-etl", ["alter"], database=db, table="t")
        def grants_on_db():  # svc-etl's grants made by other tests of this server are on other databases
            return [g for g in ann.list_grants("svc-etl") if g["database"] == db]

        assert grants_on_db() == [
            {"principal": "svc-etl", "database": db, "operations": ["read", "write"]},
            {"principal": "svc-etl", "database": db, "table": "t", "operations": ["alter"]}]
        assert {g["principal"] for g in ann.list_grants()} >= {"svc-etl"}
        svc.write(table, {"id": [1]})
        assert svc.to_arrow(table)["id"].to_pylist() == [1]
        ann.revoke("svc-etl", ["write"], database=db)
        with pytest.raises(fl.FlightUnauthorizedError, match="svc-etl may not write"):
            svc.write(table, {"id": [2]})
        ann.revoke("svc-etl", ["read"], database=db)
        ann.revoke("svc-etl", ["alter"], database=db, table="t")
        assert grants_on_db() == []


def test_credentials_are_checked(server):
    with pytest.raises(ValueError, match="not both"):
        fluxgate.connect(server.address, token="t", user="u", password="p")
    with pytest.raises(ValueError, match="needs a password"):
        fluxgate.connect(server.address, user="u")


def test_mutual_tls(tmp_path, secured):
    """A server with --tls-client-ca takes only clients with a certificate its CA signed."""
    cert, key = client_certificate(secured, tmp_path)
    args = ["--tls-cert", str(secured.cert), "--tls-key", str(secured.key), "--tls-client-ca", str(secured.ca)]
    with Server(tmp_path / "data", args, tls=True) as srv:
        with fluxgate.connect(srv.address, tls=fluxgate.TLS(ca=secured.ca, cert=cert, key=key)) as fg:
            assert "fluss" in fg.list_databases()
        with fluxgate.connect(srv.address, tls=fluxgate.TLS(ca=secured.ca)) as fg:
            with pytest.raises(fl.FlightUnavailableError):
                fg.list_databases()


def client_certificate(secured, directory):
    """A client certificate signed by the secured server's self-signed certificate (its own CA)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_cert = x509.load_pem_x509_certificate(secured.cert.read_bytes())
    ca_key = serialization.load_pem_private_key(secured.key.read_bytes(), None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fluxgate client")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path = directory / "client.pem", directory / "client.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_pyarrow_errors_pass_through(fg):
    with pytest.raises(pa.ArrowInvalid, match="invalid argument"):
        fg.create_table(f"fluss.{unique()}", {"id": "NOPE"})
