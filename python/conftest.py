"""Fixtures shared by every Python suite: servers started from $FLUXGATE_BIN on free loopback ports."""

import pyarrow.flight as fl
import pytest

from fluxgate_server import Secured, Server


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """A plain server (no TLS, no users) with a fresh data directory, for the whole session."""
    with Server(tmp_path_factory.mktemp("plain") / "data") as srv:
        yield srv


@pytest.fixture(scope="session")
def client(server):
    c = fl.connect(server.address)
    yield c
    c.close()


@pytest.fixture(scope="session")
def fg(server):
    """The fluxgate package's client of the plain server."""
    import fluxgate

    with fluxgate.connect(server.address) as c:
        yield c


@pytest.fixture(scope="session")
def secured(tmp_path_factory):
    return Secured(tmp_path_factory.mktemp("secrets"))


@pytest.fixture(scope="session")
def tls_server(tmp_path_factory, secured):
    """A server with TLS and users (see Secured), for the whole session."""
    with Server(tmp_path_factory.mktemp("secured") / "data", secured.server_args(), tls=True) as srv:
        yield srv
