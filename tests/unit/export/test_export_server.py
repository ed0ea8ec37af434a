"""MetricsServer over real sockets on 127.0.0.1 (port 0): routes, auth, TLS, stop."""

from __future__ import annotations

import base64
import gzip
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from streameval.errors import ConfigError, StreamevalError
from streameval.export import names
from streameval.export.collector import SnapshotCollector
from streameval.export.history import History
from streameval.export.server import MetricsServer, by_preference, negotiate
from streameval.export.status import status_payload
from streameval.snapshot import CumulativeRow, Intake, Moments, NdcgRow, Snapshot

SNAPSHOT = Snapshot(
    segment_labels=("arm",),
    windows=("5m",),
    ks=(10,),
    ndcg=(NdcgRow("5m", "implicit", ("control",), 10, Moments(2, 1.0, 0.52)),),
    cumulative=(CumulativeRow("implicit", ("control",), 10, 1.0, 2),),
    intake=Intake(records_read=3, accepted={"impression": 2, "click": 1}),
    watermark_ms=1_000_000,
    horizon_ms=700_000,
)


def make_registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(lambda: SNAPSHOT, version="9.9.9"))
    return registry


class StaticCollector:
    """Fixed families, for an exposition the real collector no longer produces."""

    def __init__(self, families: list[Metric]) -> None:
        self._families = families

    def collect(self) -> list[Metric]:
        return self._families


def status() -> dict[str, Any]:
    return status_payload(SNAPSHOT, History())


class Ready:
    def __init__(self) -> None:
        self.value = False

    def __call__(self) -> bool:
        return self.value


def fetch(
    url: str,
    headers: dict[str, str] | None = None,
    context: ssl.SSLContext | None = None,
    method: str = "GET",
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


@pytest.fixture
def serve() -> Iterator[Callable[..., MetricsServer]]:
    started: list[MetricsServer] = []

    def start(**kwargs: Any) -> MetricsServer:
        kwargs.setdefault("ready", lambda: True)
        server = MetricsServer(make_registry(), host="127.0.0.1", port=0, **kwargs)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def url(server: MetricsServer, path: str) -> str:
    return f"{server.scheme}://127.0.0.1:{server.port}{path}"


def test_metrics_text_exposition(serve: Callable[..., MetricsServer]) -> None:
    server = serve()
    assert server.port != 0
    code, headers, body = fetch(url(server, "/metrics"))
    assert code == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    build = families[names.BUILD_INFO].samples[0]
    assert build.labels == {"version": "9.9.9"} and build.value == 1
    ndcg = families[names.NDCG].samples[0]
    assert ndcg.labels == {"k": "10", "window": "5m", "relevance": "implicit", "arm": "control"}
    assert ndcg.value == 0.5  # 1.0 / 2


def test_metrics_gzip_when_accepted(serve: Callable[..., MetricsServer]) -> None:
    server = serve()
    code, headers, body = fetch(url(server, "/metrics"), {"Accept-Encoding": "gzip"})
    assert code == 200 and headers["Content-Encoding"] == "gzip"
    assert b"streameval_records_read_total 3.0" in gzip.decompress(body)


#: What Prometheus 2.x sends by default (scrape.acceptHeader): OpenMetrics 1.0 first.
PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
#: Prometheus 3.x's default (scrape_protocols): OpenMetrics 1.0 still preferred, by q.
PROMETHEUS3_ACCEPT = (
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
    "application/openmetrics-text;version=0.0.1;q=0.5,"
    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
)


def assert_openmetrics(headers: dict[str, str], body: bytes) -> None:
    """An OpenMetrics 1.0 answer that prometheus_client's strict OpenMetrics parser accepts
    (it rejects, among others, a gauge sharing its family name with a counter)."""
    assert headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    text = body.decode()
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in parse_openmetrics(text)}
    # The counter's family is its name without _total; the window gauges are their own.
    assert families["streameval_ndcg_sum"].type == "counter"
    assert families[names.WINDOW_NDCG_SUM].type == "gauge"
    [total] = families["streameval_ndcg_sum"].samples
    assert total.name == names.NDCG_SUM_TOTAL and total.value == 1.0
    [window_sum] = families[names.WINDOW_NDCG_SUM].samples
    assert window_sum.value == 1.0  # SNAPSHOT: two lists, NDCG summing to 1.0
    assert families[names.NDCG].samples[0].value == 0.5  # 1.0 / 2


def test_old_names_were_not_openmetrics() -> None:
    # Why the window gauges were renamed: with a gauge named streameval_ndcg_sum next to the
    # counter streameval_ndcg_sum_total (family streameval_ndcg_sum), the parser refuses.
    registry = CollectorRegistry()
    clash = GaugeMetricFamily("streameval_ndcg_sum", "old window gauge", value=1.0)
    registry.register(StaticCollector([clash, *make_registry().collect()]))
    with pytest.raises(ValueError, match="Clashing name"):
        list(parse_openmetrics(openmetrics_latest(registry).decode()))


@pytest.mark.parametrize("accept", [PROMETHEUS_ACCEPT, PROMETHEUS3_ACCEPT])
def test_openmetrics_when_the_scraper_asks(
    serve: Callable[..., MetricsServer], accept: str
) -> None:
    server = serve()
    code, headers, body = fetch(url(server, "/metrics"), {"Accept": accept})
    assert code == 200
    assert_openmetrics(headers, body)


@pytest.mark.parametrize(
    "accept",
    [
        None,  # no Accept header at all (curl, a browser's plain GET)
        "*/*",
        "text/plain",
        "text/plain;version=0.0.4",
        # OpenMetrics 0.0.1 only: prometheus_client serves 1.0 or nothing, so text it is
        "application/openmetrics-text;version=0.0.1",
        # asks for OpenMetrics, but prefers the text format
        "application/openmetrics-text;version=1.0.0;q=0.2,text/plain;version=0.0.4",
        # OpenMetrics listed first but refused (q=0, RFC 9110)
        "application/openmetrics-text;version=1.0.0;q=0,text/plain;q=0.5",
    ],
)
def test_text_format_otherwise(serve: Callable[..., MetricsServer], accept: str | None) -> None:
    server = serve()
    code, headers, body = fetch(url(server, "/metrics"), {"Accept": accept} if accept else {})
    assert code == 200
    assert headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert b"# EOF" not in body
    families = {f.name: f for f in text_string_to_metric_families(body.decode())}
    assert families[names.WINDOW_NDCG_SUM].samples[0].value == 1.0
    # the text parser names a counter family without _total too, its sample keeps it
    assert families["streameval_ndcg_sum"].samples[0].name == names.NDCG_SUM_TOTAL


def test_openmetrics_gzipped_over_tls_with_basic_auth(
    serve: Callable[..., MetricsServer], certificate: tuple[Path, Path]
) -> None:
    cert, key = certificate
    server = serve(tls_certfile=str(cert), tls_keyfile=str(key), basic_auth=("prom", "pw"))
    trusting = ssl.create_default_context(cafile=str(cert))
    headers = {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"}
    assert fetch(url(server, "/metrics"), headers, context=trusting)[0] == 401
    code, got, body = fetch(
        url(server, "/metrics"), headers | basic("prom", "pw"), context=trusting
    )
    assert code == 200 and got["Content-Encoding"] == "gzip"
    assert_openmetrics(got, gzip.decompress(body))


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("", []),
        ("a, b;q=0.5, c;q=1", ["a", "c;q=1", "b;q=0.5"]),  # ties keep their order
        ("a;q=0, b", ["b"]),  # q=0: not acceptable
        ("a;q=oops, b;q=0.1", ["b;q=0.1"]),  # an unreadable weight is no preference
        ("a;version=1.0.0;Q=0.3,b;q=0.4", ["b;q=0.4", "a;version=1.0.0;Q=0.3"]),
        (" , a", ["a"]),
    ],
)
def test_accept_ranges_by_preference(accept: str, expected: list[str]) -> None:
    assert by_preference(accept) == expected


@pytest.mark.parametrize(
    ("accept", "openmetrics"),
    [
        (PROMETHEUS_ACCEPT, True),
        ("application/json, application/openmetrics-text; version=1.0.0; q=0.9", True),
        ("application/openmetrics-text", True),  # no version: 1.0
        ("application/json, text/*;q=0.1", False),
        ("application/json", False),  # nothing we serve: the text format all the same
        ("application/openmetrics-text;version=0.0.1, text/plain;q=0.1", False),
    ],
)
def test_negotiate(accept: str, openmetrics: bool) -> None:
    _, content_type = negotiate(accept)
    assert content_type.startswith("application/openmetrics-text") == openmetrics
    if not openmetrics:
        assert content_type.startswith("text/plain; version=0.0.4")


def test_healthz_readyz_both_states(serve: Callable[..., MetricsServer]) -> None:
    ready = Ready()
    server = serve(ready=ready)
    assert fetch(url(server, "/healthz"))[::2] == (200, b"ok\n")
    assert fetch(url(server, "/readyz"))[::2] == (503, b"not ready\n")
    ready.value = True
    assert fetch(url(server, "/readyz"))[::2] == (200, b"ready\n")


def test_healthz_follows_live_when_given(serve: Callable[..., MetricsServer]) -> None:
    live = Ready()  # the same kind of switch
    server = serve(live=live)
    assert fetch(url(server, "/healthz"))[::2] == (503, b"stalled\n")
    live.value = True
    assert fetch(url(server, "/healthz"))[::2] == (200, b"ok\n")


def test_head_has_no_body(serve: Callable[..., MetricsServer]) -> None:
    server = serve()
    code, headers, body = fetch(url(server, "/healthz"), method="HEAD")
    assert (code, body, headers["Content-Length"]) == (200, b"", "3")


def test_status_page_and_api(serve: Callable[..., MetricsServer]) -> None:
    server = serve(status=status)
    code, headers, body = fetch(url(server, "/"))
    assert code == 200 and headers["Content-Type"].startswith("text/html")
    assert b"api/status" in body
    code, headers, body = fetch(url(server, "/api/status"))
    assert code == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == json.loads(json.dumps(status()))
    assert headers["Cache-Control"] == "no-store"


def test_without_status_index_and_no_api(serve: Callable[..., MetricsServer]) -> None:
    server = serve()
    code, _, body = fetch(url(server, "/"))
    assert code == 200 and b'href="/metrics"' in body
    assert fetch(url(server, "/api/status"))[0] == 404


def test_unknown_path_is_404(serve: Callable[..., MetricsServer]) -> None:
    server = serve(status=status)
    assert fetch(url(server, "/nope"))[0] == 404
    assert fetch(url(server, "/metrics/extra"))[0] == 404


def test_failing_status_is_500_and_server_keeps_serving(
    serve: Callable[..., MetricsServer],
) -> None:
    def broken() -> dict[str, Any]:
        raise RuntimeError("boom")

    server = serve(status=broken)
    assert fetch(url(server, "/api/status"))[0] == 500
    assert fetch(url(server, "/healthz"))[0] == 200


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_basic_auth(serve: Callable[..., MetricsServer]) -> None:
    server = serve(status=status, basic_auth=("prom", SecretStr("s3cret")))
    code, headers, _ = fetch(url(server, "/metrics"))
    assert code == 401 and headers["WWW-Authenticate"].startswith("Basic realm=")
    assert fetch(url(server, "/metrics"), basic("prom", "wrong"))[0] == 401
    assert fetch(url(server, "/metrics"), basic("other", "s3cret"))[0] == 401
    assert fetch(url(server, "/metrics"), {"Authorization": "Basic !!notbase64"})[0] == 401
    assert fetch(url(server, "/metrics"), {"Authorization": "Bearer s3cret"})[0] == 401
    assert fetch(url(server, "/metrics"), basic("prom", "s3cret"))[0] == 200
    assert fetch(url(server, "/"), basic("prom", "s3cret"))[0] == 200
    assert fetch(url(server, "/api/status"))[0] == 401
    assert fetch(url(server, "/"))[0] == 401
    # Probes stay open.
    assert fetch(url(server, "/healthz"))[0] == 200
    assert fetch(url(server, "/readyz"))[0] == 200


def test_basic_auth_plain_string_password(serve: Callable[..., MetricsServer]) -> None:
    server = serve(basic_auth=("prom", "pa:ss"))  # a colon in the password is allowed
    assert fetch(url(server, "/metrics"), basic("prom", "pa:ss"))[0] == 200
    assert fetch(url(server, "/metrics"), basic("prom", "pa"))[0] == 401


@pytest.mark.parametrize("auth", [("", "x"), ("user", ""), ("a:b", "x")])
def test_bad_basic_auth_settings(auth: tuple[str, str]) -> None:
    with pytest.raises(ConfigError, match="basic auth"):
        MetricsServer(CollectorRegistry(), host="127.0.0.1", port=0, ready=bool, basic_auth=auth)


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the openssl CLI is needed to make a test certificate")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_tls(serve: Callable[..., MetricsServer], certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    server = serve(tls_certfile=str(cert), tls_keyfile=str(key), basic_auth=("prom", "pw"))
    assert server.scheme == "https"
    trusting = ssl.create_default_context(cafile=str(cert))
    code, _, body = fetch(url(server, "/metrics"), basic("prom", "pw"), context=trusting)
    assert code == 200 and b"streameval_build_info" in body
    assert fetch(url(server, "/healthz"), context=trusting)[0] == 200
    # A client that does not trust the certificate is refused by its own TLS check.
    with pytest.raises(urllib.error.URLError):
        fetch(url(server, "/healthz"), context=ssl.create_default_context())
    # Plain HTTP to the TLS port gets no HTTP answer; the server still serves afterwards.
    with pytest.raises((http.client.HTTPException, ConnectionError, OSError)):
        fetch(f"http://127.0.0.1:{server.port}/healthz")
    assert fetch(url(server, "/healthz"), context=trusting)[0] == 200


def test_tls_with_missing_files_is_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TLS"):
        MetricsServer(
            CollectorRegistry(),
            host="127.0.0.1",
            port=0,
            ready=bool,
            tls_certfile=str(tmp_path / "missing.pem"),
        )
    with pytest.raises(ConfigError, match="TLS"):
        MetricsServer(
            CollectorRegistry(), host="127.0.0.1", port=0, ready=bool, tls_keyfile="key.pem"
        )


def test_stop_closes_the_port_and_open_connections() -> None:
    server = MetricsServer(make_registry(), host="127.0.0.1", port=0, ready=lambda: True)
    assert server.port == 0
    server.start()
    port = server.port
    with pytest.raises(StreamevalError, match="already started"):
        server.start()
    keep_alive = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    keep_alive.request("GET", "/healthz")
    assert keep_alive.getresponse().read() == b"ok\n"
    server.stop()
    server.stop()  # idempotent
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 2):
        pass
    with pytest.raises((http.client.HTTPException, ConnectionError, OSError)):
        keep_alive.request("GET", "/healthz")
        keep_alive.getresponse()
    keep_alive.close()


def test_context_manager_and_port_in_use() -> None:
    with MetricsServer(make_registry(), host="127.0.0.1", port=0, ready=lambda: True) as first:
        assert fetch(url(first, "/healthz"))[0] == 200
        second = MetricsServer(make_registry(), host="127.0.0.1", port=first.port, ready=bool)
        with pytest.raises(StreamevalError, match=r"metrics\.port"):
            second.start()
