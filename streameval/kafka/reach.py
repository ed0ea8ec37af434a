"""Before the daemon connects for real: is any broker there, and do the topics it reads exist?

kafka-python, given an address where nothing answers, retries for about 30 s, logs an ERROR at
each attempt and then fails with "Unable to bootstrap", in whatever client happened to connect
first (the dead-letter topic's, at the time of issue 28). :func:`wait_for_brokers` asks first,
with a plain TCP connection to each ``kafka.bootstrap_servers`` address, and says within
seconds which address did not answer and which key sets it; with ``kafka.connect_retry`` it
keeps asking (with backoff) until one answers or the daemon is asked to stop.
:func:`check_topics` then names every topic read that is missing, and the key that lists it,
before anything is created on the broker.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kafka.errors import KafkaError

from streameval.errors import KafkaUnavailableError
from streameval.kafka.admin import BOOTSTRAP_KEY, admin_client

_LOG = logging.getLogger(__name__)

#: the whole probe of every address ends within this (the operator hears within 10 s)
PROBE_S = 8.0
#: one address may take at most this of it (a black-holed address waits out its timeout)
PER_ADDRESS_S = 4.0
#: with ``kafka.connect_retry``: the waits between probes, doubling from the first to the last
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 30.0


def addresses(bootstrap_servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """``"a:9092,b"`` -> ``[("a", 9092), ("b", 9092)]`` (kafka-python's default port 9092;
    ``[::1]:9092`` for IPv6)."""
    items = (
        bootstrap_servers.split(",") if isinstance(bootstrap_servers, str) else bootstrap_servers
    )
    out = []
    for item in items:
        text = item.strip()
        if not text:
            continue
        # a scheme some tools write (PLAINTEXT://host:port) is not part of the address
        text = text.rsplit("://", 1)[-1]
        host, port = text, 9092
        if text.startswith("["):  # [v6]:port
            host, _, rest = text[1:].partition("]")
            if rest.startswith(":") and rest[1:].isdigit():
                port = int(rest[1:])
        elif text.count(":") == 1:
            head, _, tail = text.partition(":")
            if tail.isdigit():
                host, port = head, int(tail)
        out.append((host, port))
    return out


#: ApiVersions v0 (api key 18), correlation id 1, client id "streameval": the request every
#: client sends first, answered before any authentication (KIP-35, KIP-255)
_API_VERSIONS = struct.pack(">hhih", 18, 0, 1, 10) + b"streameval"


def _answers(host: str, port: int, timeout_s: float, *, speak: bool) -> str | None:
    """None when ``host:port`` accepts a TCP connection within ``timeout_s`` and, with
    ``speak`` (a plaintext listener), answers an ApiVersions request like a broker; else why
    not. (A TLS listener gets the connection only: the handshake is the client's business.)"""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            if not speak:
                return None
            sock.sendall(struct.pack(">i", len(_API_VERSIONS)) + _API_VERSIONS)
            head = sock.recv(8)
            if len(head) < 8:
                return "closed the connection: not a Kafka listener?"
            _size, correlation = struct.unpack(">ii", head)
            if correlation != 1:
                return "answered, but not as a Kafka broker"
            return None
    except socket.gaierror:
        return "unknown host"
    except TimeoutError:
        return f"no answer in {timeout_s:g} s"
    except ConnectionRefusedError:
        return "connection refused"
    except ConnectionResetError:
        return "closed the connection: not a Kafka listener?"
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def probe(
    bootstrap_servers: str | Sequence[str],
    *,
    speak: bool = True,
    budget_s: float = PROBE_S,
    clock: Callable[[], float] = time.monotonic,
    retry_hint: bool = True,
) -> str | None:
    """None when some address answers (within ``budget_s`` in all); else the one-line error
    (``retry_hint``: saying that ``kafka.connect_retry`` waits instead, as ``run`` does)."""
    found = addresses(bootstrap_servers)
    deadline = clock() + budget_s
    why: list[str] = []
    for host, port in found:
        left = deadline - clock()
        if left <= 0:
            why.append(f"{host}:{port} (not tried: out of time)")
            continue
        reason = _answers(host, port, min(PER_ADDRESS_S, left), speak=speak)
        if reason is None:
            return None
        why.append(f"{host}:{port} ({reason})")
    at = ", ".join(why) or repr(bootstrap_servers)
    hint = " (kafka.connect_retry = true waits for it)" if retry_hint else ""
    return (
        f"no Kafka broker answered at {at} ({BOOTSTRAP_KEY}): check the address and that the "
        f"broker is up{hint}"
    )


def require_brokers(bootstrap_servers: str | Sequence[str], security_protocol: str) -> None:
    """For the commands that connect once (``inspect --topic``, ``simulate``): raises
    :class:`KafkaUnavailableError` within seconds when no broker answers (see :func:`probe`)."""
    error = probe(bootstrap_servers, speak=_speaks(security_protocol), retry_hint=False)
    if error is not None:
        raise KafkaUnavailableError(error)


def _speaks(security_protocol: str) -> bool:
    """A plaintext listener is asked ApiVersions; a TLS one only connected to."""
    return not security_protocol.upper().endswith("SSL")


def wait_for_brokers(
    bootstrap_servers: str | Sequence[str],
    *,
    security_protocol: str = "PLAINTEXT",
    retry: bool,
    stop: Callable[[], bool],
    wait: Callable[[float], object],
    budget_s: float = PROBE_S,
) -> bool:
    """Returns True once a broker answers. Without ``retry`` a silence raises
    :class:`KafkaUnavailableError`; with it the probe is repeated after 1, 2, 4 … 30 s (``wait``
    sleeps, and should return early when asked to stop) until a broker answers (True) or
    ``stop`` says True (False). Over TLS (``security_protocol`` SSL, SASL_SSL) the probe is a
    TCP connection; otherwise the broker must answer an ApiVersions request."""
    pause = RETRY_FIRST_S
    while not stop():
        error = probe(bootstrap_servers, speak=_speaks(security_protocol), budget_s=budget_s)
        if error is None:
            return True
        if not retry:
            raise KafkaUnavailableError(error)
        _LOG.warning("%s; retrying in %g s (kafka.connect_retry)", error, pause)
        wait(pause)
        pause = min(RETRY_MAX_S, pause * 2)
    return False


def check_topics(config: Mapping[str, Any], wanted: Mapping[str, Sequence[str]]) -> None:
    """Raises :class:`KafkaUnavailableError` naming every missing topic and the key that lists
    it (``wanted``: key, e.g. "kafka.topics" -> its topics); creates nothing."""
    asked = [t for topics in wanted.values() for t in topics]
    if not asked:
        return
    with admin_client(config, "to list the topics") as admin:
        try:
            existing = set(admin.list_topics())
        except KafkaError as exc:
            raise KafkaUnavailableError(f"cannot list the topics: {exc}") from exc
    missing = []
    for key, topics in wanted.items():
        absent = [t for t in topics if t not in existing]
        if absent:
            variable = "STREAMEVAL_" + key.upper().replace(".", "__")
            missing.append(f"{absent} of {key} ({variable})")
    if missing:
        raise KafkaUnavailableError(
            "topics do not exist (or this client may not see them): "
            + "; ".join(missing)
            + ": create them, or correct the key"
        )
