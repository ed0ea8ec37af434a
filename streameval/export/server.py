"""The HTTP endpoint: ``/metrics``, ``/healthz``, ``/readyz``, the status page and its JSON.

A stdlib :class:`~http.server.ThreadingHTTPServer` in a daemon thread; each request is served on a
thread of its own, so a slow client does not hold up the next scrape.

========================  =====================================================================
``/metrics``              the registry in OpenMetrics 1.0 when ``Accept`` prefers it (as
                          Prometheus does by default), else the Prometheus text format 0.0.4;
                          gzip when ``Accept-Encoding`` allows it
``/healthz``              200 ``ok`` while ``live()`` is true (or none is given), else 503
                          ``stalled`` (liveness: an orchestrator restarts a stuck process)
``/readyz``               200 ``ready`` when ``ready()`` is true, else 503 (readiness)
``/``                     the live status page (when a ``status`` callable is given; else a small
                          index of the endpoints)
``/api/status``           JSON from ``status()`` (404 without one)
anything else             404
========================  =====================================================================

Optional TLS (``tls_certfile`` + ``tls_keyfile``) and HTTP basic auth (``basic_auth=(user,
password)``) are off by default. With basic auth on, ``/healthz`` and ``/readyz`` stay open: they
reveal nothing but up/ready, and orchestrator probes (Kubernetes, Docker) do not send credentials.
Requests are not logged one by one; errors go to the ``streameval.export.server`` logger at debug.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import gzip
import json
import logging
import secrets
import socket
import ssl
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder
from pydantic import SecretStr

from streameval.errors import ConfigError, StreamevalError
from streameval.export.status import status_page_html

_LOG = logging.getLogger(__name__)

#: Seconds a connection may stay silent (TLS handshake included) before its thread gives up.
REQUEST_TIMEOUT_S = 30.0
_OPEN_PATHS = frozenset({"/healthz", "/readyz"})
_REALM = "streameval"

_INDEX_HTML = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>streameval</title></head>
<body><h1>streameval</h1><ul>
<li><a href="/metrics">/metrics</a></li><li><a href="/healthz">/healthz</a></li>
<li><a href="/readyz">/readyz</a></li></ul></body></html>
"""


#: status, body, content type, extra headers
_Response = tuple[HTTPStatus, bytes, str, dict[str, str]]


def _text(status: HTTPStatus, text: str) -> _Response:
    return status, f"{text}\n".encode(), "text/plain; charset=utf-8", {}


class _App:
    """What the handlers need, held by the server instance (no module state)."""

    def __init__(
        self,
        registry: CollectorRegistry,
        ready: Callable[[], bool],
        status: Callable[[], dict[str, Any]] | None,
        credentials: tuple[bytes, bytes] | None,
        live: Callable[[], bool] | None = None,
    ) -> None:
        self.registry = registry
        self.ready = ready
        self.live = live
        self.status = status
        self.credentials = credentials
        self.page = status_page_html() if status is not None else _INDEX_HTML

    def authorized(self, header: str | None) -> bool:
        if self.credentials is None:
            return True
        if not header:
            return False
        scheme, _, encoded = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        user, sep, password = decoded.partition(b":")
        want_user, want_password = self.credentials
        # Compare both parts every time (no early exit that would tell which one was wrong).
        user_ok = secrets.compare_digest(user, want_user)
        password_ok = secrets.compare_digest(password, want_password)
        return bool(sep) and user_ok and password_ok


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        app: _App,
        tls: ssl.SSLContext | None,
        family: socket.AddressFamily,
    ) -> None:
        self.address_family = family
        self.app = app
        self.tls = tls
        # Connections being served (keep-alive ones included), closed by close_connections().
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        if self.tls is not None:
            # The handshake is made lazily, on the request's own thread (see _Handler.setup), so
            # a client that stalls in it never blocks accept().
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        with self._open_lock:
            self._open.add(sock)
        return sock, address

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Cut every connection still open, so nothing is served once stopped."""
        with self._open_lock:
            remaining = list(self._open)
        for sock in remaining:
            with contextlib.suppress(OSError):  # already closed by its client
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        _LOG.debug("error serving %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server_version = "streameval"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_S

    @property
    def app(self) -> _App:
        return cast(_Server, self.server).app

    def setup(self) -> None:
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.do_handshake()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no line on stderr per request."""

    def do_GET(self) -> None:
        self._route(head=False)

    def do_HEAD(self) -> None:
        self._route(head=True)

    def _route(self, *, head: bool) -> None:
        try:
            status, body, content_type, extra = self._respond(urlsplit(self.path).path)
        except Exception:  # a failing collector or status callable must not kill the server
            _LOG.exception("error serving %s", self.path)
            status, body, content_type, extra = _text(
                HTTPStatus.INTERNAL_SERVER_ERROR, "internal error"
            )
        self._send(status, body, content_type, head=head, extra=extra)

    def _respond(self, path: str) -> _Response:
        app = self.app
        if path not in _OPEN_PATHS and not app.authorized(self.headers.get("Authorization")):
            status, body, content_type, _ = _text(
                HTTPStatus.UNAUTHORIZED, "authentication required"
            )
            challenge = {"WWW-Authenticate": f'Basic realm="{_REALM}", charset="UTF-8"'}
            return status, body, content_type, challenge
        if path == "/metrics":
            return self._metrics()
        if path == "/healthz":
            if app.live is None or app.live():
                return _text(HTTPStatus.OK, "ok")
            return _text(HTTPStatus.SERVICE_UNAVAILABLE, "stalled")
        if path == "/readyz":
            if app.ready():
                return _text(HTTPStatus.OK, "ready")
            return _text(HTTPStatus.SERVICE_UNAVAILABLE, "not ready")
        if path in ("/", "/index.html"):
            return HTTPStatus.OK, app.page, "text/html; charset=utf-8", {}
        if path == "/api/status" and app.status is not None:
            body = json.dumps(app.status(), allow_nan=False).encode()
            return HTTPStatus.OK, body, "application/json", {}
        return _text(HTTPStatus.NOT_FOUND, "not found")

    def _metrics(self) -> _Response:
        encoder, content_type = negotiate(self.headers.get("Accept", ""))
        body = encoder(self.app.registry)
        extra = {}
        if "gzip" in self.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body, compresslevel=1)
            extra["Content-Encoding"] = "gzip"
        return HTTPStatus.OK, body, content_type, extra

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        content_type: str,
        *,
        head: bool,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)


def by_preference(accept: str) -> list[str]:
    """The media ranges of an ``Accept`` header, by their ``q`` (highest first, ties in the
    order given), without those of ``q=0`` (not acceptable, RFC 9110 §12.5.1)."""
    ranked: list[tuple[float, int, str]] = []
    for position, media_range in enumerate(accept.split(",")):
        quality = 1.0
        for param in media_range.split(";")[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value.strip())
                except ValueError:
                    quality = 0.0  # an unreadable weight: not a preference to honour
        if quality > 0 and media_range.strip():
            ranked.append((-quality, position, media_range.strip()))
    return [media_range for _, _, media_range in sorted(ranked)]


_TEXT_RANGES = frozenset({"text/plain", "text/*", "*/*"})


def negotiate(accept: str) -> tuple[Callable[[CollectorRegistry], bytes], str]:
    """The encoder and content type for ``/metrics``: OpenMetrics (1.0, what prometheus_client
    writes) when it is the client's most preferred format we can serve, else the text format.

    prometheus_client's ``choose_encoder`` ignores ``q`` and passes over a text range to an
    OpenMetrics one listed later, so it is asked about one range at a time, best first.
    """
    for media_range in by_preference(accept):
        encoder, content_type = choose_encoder(media_range)
        media_type = media_range.split(";")[0].strip().lower()
        if content_type.startswith("application/openmetrics-text") or media_type in _TEXT_RANGES:
            return encoder, content_type
    return choose_encoder("")  # nothing we serve was asked for: the text format, as before


def _credentials(basic_auth: tuple[str, SecretStr | str] | None) -> tuple[bytes, bytes] | None:
    if basic_auth is None:
        return None
    user, password = basic_auth
    secret = password.get_secret_value() if isinstance(password, SecretStr) else password
    if not user or not secret:
        raise ConfigError("metrics basic auth needs a non-empty user name and password")
    if ":" in user:
        raise ConfigError("metrics basic auth: the user name must not contain ':'")
    return user.encode(), secret.encode()


def _tls_context(certfile: str | None, keyfile: str | None) -> ssl.SSLContext | None:
    if certfile is None and keyfile is None:
        return None
    if certfile is None:
        raise ConfigError("metrics TLS: a key file was given without a certificate file")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"metrics TLS: cannot load certificate {certfile!r}: {exc}") from exc
    return context


class MetricsServer:
    """Serves a registry's metrics, health, readiness and the status page over HTTP(S).

    ``start()`` binds and serves on a daemon thread; ``stop()`` shuts down and closes the socket.
    Also a context manager (``with MetricsServer(...) as server:``).
    """

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        host: str,
        port: int,
        ready: Callable[[], bool],
        status: Callable[[], dict[str, Any]] | None = None,
        tls_certfile: str | None = None,
        tls_keyfile: str | None = None,
        basic_auth: tuple[str, SecretStr | str] | None = None,
        live: Callable[[], bool] | None = None,
    ) -> None:
        self._host = host
        self._port = port
        self._app = _App(registry, ready, status, _credentials(basic_auth), live)
        self._tls = _tls_context(tls_certfile, tls_keyfile)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port served on: the real one once started, even when 0 was asked."""
        if self._server is not None:
            return int(self._server.server_address[1])
        return self._port

    @property
    def host(self) -> str:
        return self._host

    @property
    def scheme(self) -> str:
        return "https" if self._tls is not None else "http"

    def start(self) -> None:
        if self._server is not None:
            raise StreamevalError("MetricsServer is already started")
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        try:
            server = _Server((self._host, self._port), self._app, self._tls, family)
        except OSError as exc:
            raise StreamevalError(
                f"cannot listen on {self._host}:{self._port} (metrics.host / metrics.port): {exc}"
            ) from exc
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},  # how soon stop() is noticed
            name=f"streameval-http-{server.server_address[1]}",
            daemon=True,
        )
        self._server, self._thread = server, thread
        thread.start()

    def stop(self) -> None:
        """Stop serving and close the listening socket (idempotent)."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        server.close_connections()
        if thread is not None:
            thread.join()

    def __enter__(self) -> MetricsServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
