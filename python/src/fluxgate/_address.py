"""The server's address: the same forms as the CLI's FLUXGATE_ADDR and the Go client's Dial."""

from __future__ import annotations

DEFAULT_ADDR = "127.0.0.1:8815"

_FORMS = "want host:port, grpc://host:port or grpc+tls://host:port"


def flight_location(addr: str, tls: bool) -> str:
    """Returns the pyarrow.flight location of `addr` (``host:port``, ``grpc://``, ``grpc+tcp://`` or
    ``grpc+tls://``). A bare ``host:port`` speaks TLS when `tls` is set; a ``grpc://`` address with `tls` is an
    error, since the two disagree."""
    target, scheme_tls = addr, None
    for scheme, is_tls in (("grpc+tls://", True), ("grpc+tcp://", False), ("grpc://", False)):
        if addr.startswith(scheme):
            target, scheme_tls = addr[len(scheme):], is_tls
            break
    else:
        if "://" in addr:
            raise ValueError(f"address {addr!r}: {_FORMS}")
    target = target.removesuffix("/")
    if not target or "/" in target or ":" not in target:
        raise ValueError(f"address {addr!r}: {_FORMS}")
    if scheme_tls is False and tls:
        raise ValueError(f"address {addr!r} is plain gRPC but TLS options were given: use grpc+tls://{target}")
    return f"grpc+tls://{target}" if tls or scheme_tls else f"grpc+tcp://{target}"
