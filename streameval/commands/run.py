"""``streameval run [--config FILE]``: the daemon. SIGTERM and SIGINT stop it cleanly."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from streameval import gc_policy

if TYPE_CHECKING:
    from streameval.config import KafkaSettings


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
    import logging

    if client is not None:
        return logging.getLevelNamesMapping()[client]
    return max(logging.WARNING, logging.getLevelNamesMapping()[log_level])


def run(args: argparse.Namespace) -> int:
    import logging
    import signal
    import threading

    from streameval.config import load_settings
    from streameval.daemon import Daemon
    from streameval.errors import KafkaUnavailableError

    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # kafka-python is chatty at INFO (every connection and rebalance step): WARNING unless asked
    logging.getLogger("kafka").setLevel(client_log_level(args.log_level, args.client_log_level))
    # and both clients log every failed reconnect during an outage: one of a kind per 30 s
    from streameval.log_limits import RepeatLimiter

    limiter = RepeatLimiter()
    for handler in logging.getLogger().handlers:
        handler.addFilter(limiter)
    settings = load_settings(args.config)
    gc_policy.tune()  # a large live heap: see streameval.gc_policy
    stop = threading.Event()

    def _stop(signum: int, _frame: object) -> None:
        logging.getLogger("streameval").info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        Daemon(settings).run(stop)
    except KafkaUnavailableError as exc:
        raise KafkaUnavailableError(f"{exc}{_sasl_hint(settings.kafka)}") from exc
    return 0


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
