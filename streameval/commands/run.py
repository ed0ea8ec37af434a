"""``streameval run [--config FILE]``: the daemon. SIGTERM and SIGINT stop it cleanly."""

from __future__ import annotations

import argparse
import faulthandler
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from streameval import gc_policy

if TYPE_CHECKING:
    from streameval.config import KafkaSettings

#: a stop still under way after this long prints every thread's stack to stderr (the log): where
#: a shutdown hangs, for whoever then kills the daemon (Kubernetes does after 30 s by default)
STOP_STACKS_S = 20.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="the daemon: Kafka in, /metrics out",
        description=(
            "Consume impressions, clicks and judgments from Kafka, compute NDCG@k over "
            "event-time windows and serve /metrics, /healthz and /readyz. Settings come from "
            "the TOML file and STREAMEVAL_* environment variables."
        ),
    )
    p.add_argument("--config", metavar="FILE", help="TOML configuration file")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    p.add_argument(
        "--client-log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help=(
            "level of the Kafka client's own log (kafka-python: every connection and rebalance "
            "step at INFO); default: WARNING, or --log-level when that is higher"
        ),
    )
    p.set_defaults(handler=run)


def client_log_level(log_level: str, client: str | None) -> int:
    """The Kafka client's log level: ``client`` when given, else ``log_level`` but never below
    WARNING (kafka-python logs every connection and rebalance step at INFO)."""
    if client is not None:
        return logging.getLevelNamesMapping()[client]
    return max(logging.WARNING, logging.getLevelNamesMapping()[log_level])


def run(args: argparse.Namespace) -> int:
    import signal

    from streameval.config import load_settings
    from streameval.errors import KafkaUnavailableError
    from streameval.runtime.daemon import Daemon

    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # kafka-python is chatty at INFO (every connection and rebalance step): WARNING unless asked
    logging.getLogger("kafka").setLevel(client_log_level(args.log_level, args.client_log_level))
    # and both clients log every failed reconnect during an outage: one of a kind per 30 s
    from streameval.log_limits import RepeatLimiter, quiet_slow_steps

    limiter = RepeatLimiter()
    for handler in logging.getLogger().handlers:
        handler.addFilter(limiter)
    # kafka-python's "Task … ran for 0.186s … blocking the event loop": its network thread
    # waiting for the GIL behind the read loop, harmless below a second (why: see
    # streameval.log_limits.SlowStepFilter)
    quiet_slow_steps()
    settings = load_settings(args.config)
    gc_policy.tune()  # a large live heap: see streameval.gc_policy
    stop = threading.Event()
    on_signal = stop_handler(stop)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        Daemon(settings).run(stop)
    except KafkaUnavailableError as exc:
        raise KafkaUnavailableError(f"{exc}{_sasl_hint(settings.kafka)}") from exc
    finally:
        faulthandler.cancel_dump_traceback_later()
    logging.getLogger("streameval").info("stopped")
    return 0


def stop_handler(
    stop: threading.Event, stacks_after_s: float = STOP_STACKS_S
) -> Callable[[int, object], None]:
    """The handler of SIGTERM and SIGINT: sets ``stop``, and at the first signal arms
    :mod:`faulthandler` to print every thread's stack to stderr if the process is still there
    ``stacks_after_s`` later. A shutdown waits on brokers (the last commit, leaving the group);
    when one of those waits hangs, the log then says which."""

    def handle(signum: int, _frame: object) -> None:
        logging.getLogger("streameval").info("signal %d: stopping", signum)
        if not stop.is_set():
            faulthandler.dump_traceback_later(stacks_after_s, exit=False)
        stop.set()

    return handle


def _sasl_hint(kafka: KafkaSettings) -> str:
    """With SASL, what to check: kafka-python cannot tell a refused password from a broker that
    does not answer (the broker just closes the connection), so both read "Unable to
    bootstrap". Never the password itself."""
    if not kafka.security_protocol.startswith("SASL"):
        return ""
    return (
        f" (authenticating with SASL {kafka.sasl_mechanism} as {kafka.sasl_username!r} over "
        f"{kafka.security_protocol}: if the broker answers, check kafka.sasl_username and "
        "kafka.sasl_password)"
    )
