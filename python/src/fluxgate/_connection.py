"""The Flight connection, its TLS settings and its credentials."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import pyarrow as pa
import pyarrow.flight as fl

from ._address import flight_location

T = TypeVar("T")

PEM = str | bytes | os.PathLike[str]


@dataclass(frozen=True)
class TLS:
    """TLS settings of a connection (``serve --tls-cert``, and ``--tls-client-ca`` for mutual TLS).

    Each certificate is PEM: bytes, text starting with ``-----BEGIN``, or the path of a file.

    Attributes:
        ca: the root certificates that sign the server's certificate (a private CA, or the server's own
            self-signed certificate); None trusts the system's roots.
        cert: the client's certificate chain, for mutual TLS (with `key`).
        key: the client certificate's private key.
        override_hostname: the name to check the server's certificate against, when it is not the address's host.
    """

    ca: PEM | None = None
    cert: PEM | None = None
    key: PEM | None = None
    override_hostname: str | None = None


def _pem(value: PEM | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str) and value.lstrip().startswith("-----BEGIN"):
        return value
    with open(value, encoding="ascii") as f:
        return f.read()


class Connection:
    """A FlightClient and the authorization header every call carries.

    With a user and password the connection shakes hands (HTTP basic) for a bearer token, and shakes hands again
    when a call is refused as UNAUTHENTICATED, since the server's tokens expire (``serve --token-ttl``)."""

    def __init__(self, addr: str, *, tls: TLS | bool | None, token: str | None, user: str | None,
                 password: str | None) -> None:
        if token is not None and user is not None:
            raise ValueError("give a token or a user and password, not both")
        if (user is None) != (password is None):
            raise ValueError("a user needs a password, and a password a user")
        settings = TLS() if tls is True else tls or None
        location = flight_location(addr, settings is not None)
        if settings is None:
            self.flight = fl.connect(location)
        else:
            self.flight = fl.connect(location, tls_root_certs=_pem(settings.ca), cert_chain=_pem(settings.cert),
                                     private_key=_pem(settings.key), override_hostname=settings.override_hostname)
        self.location = location
        self._user, self._password = user, password
        self._headers: list[tuple[bytes, bytes]] = []
        try:
            if token is not None:
                self._headers = [(b"authorization", b"Bearer " + token.encode())]
            elif user is not None:
                self._handshake()
        except BaseException:
            self.flight.close()
            raise

    def _handshake(self) -> None:
        assert self._user is not None and self._password is not None
        key, value = self.flight.authenticate_basic_token(self._user, self._password)
        self._headers = [(_bytes(key), _bytes(value))]

    def options(self, write_options: pa.ipc.IpcWriteOptions | None = None) -> fl.FlightCallOptions:
        """Call options carrying the authorization header (and `write_options` for the batches a call sends)."""
        # pyarrow takes the headers as bytes (its stubs say str).
        headers = cast(list[tuple[str, str]], self._headers)
        return fl.FlightCallOptions(headers=headers, write_options=write_options)

    def call(self, fn: Callable[[fl.FlightCallOptions], T]) -> T:
        """Runs a unary call; with a user and password, shakes hands again once if its token was refused."""
        try:
            return fn(self.options())
        except fl.FlightUnauthenticatedError:
            if self._user is None:
                raise
            self._handshake()
            return fn(self.options())

    def schema(self, table: str) -> pa.Schema:
        """The Arrow schema of a table (GetSchema of its path), whose types writes and lookups are cast to."""
        path = fl.FlightDescriptor.for_path(*table.split("."))
        # pyarrow answers a SchemaResult (its stubs say Schema).
        result = cast(fl.SchemaResult, self.call(lambda opts: self.flight.get_schema(path, options=opts)))
        return result.schema

    def close(self) -> None:
        self.flight.close()


def _bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode()
