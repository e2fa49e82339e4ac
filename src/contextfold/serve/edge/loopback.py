"""What ``--no-auth`` serves: requests addressed to this machine, from no foreign web page.

Without a token, anything that can reach the port could use the proxy (and the upstream key
it holds), and a browser can: a page posts ``text/plain`` without a CORS preflight, and a
DNS-rebinding page reads answers under its own name. So with ``--no-auth`` every request must
name the loopback host (``localhost``, ``127.0.0.1``, ``[::1]``) with the proxy's port in
``Host``, carry no ``Origin`` but such a host's, and send a body only as ``application/json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from contextfold.serve.config import is_loopback
from contextfold.serve.errors import ApiError

__all__ = ["check_local"]


def check_local(method: str, headers: Mapping[str, str], port: int | None) -> None:
    """Raise a 403 (a foreign ``Host`` or ``Origin``) or a 415 (a body not sent as JSON)."""
    host = headers.get("host", "")
    if not _local_host(host, port):
        raise ApiError(
            403,
            f"with --no-auth the proxy answers only requests addressed to localhost or "
            f"127.0.0.1 on port {port}; this one has Host {host!r}",
            code="foreign_host",
        )
    origin = headers.get("origin")
    if origin is not None and not _local_origin(origin, port):
        raise ApiError(
            403,
            f"with --no-auth the proxy refuses requests from web pages of other hosts; this "
            f"one has Origin {origin!r}",
            code="foreign_origin",
        )
    if method == "POST":
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise ApiError(
                415,
                f"with --no-auth a request body must be sent as Content-Type: application/json, "
                f"not {media or 'none'!r}",
            )


def _local_host(value: str, port: int | None) -> bool:
    parts = urlsplit(f"//{value}")
    try:
        given = parts.port
    except ValueError:
        return False
    return _loopback_name(parts.hostname) and given == (port if given is not None else 80)


def _local_origin(value: str, port: int | None) -> bool:
    parts = urlsplit(value)
    try:
        given = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and _loopback_name(parts.hostname) and given == port


def _loopback_name(name: str | None) -> bool:
    return name is not None and is_loopback(name)
