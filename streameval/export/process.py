"""The standard process metrics (DESIGN §8), beside streameval's own on a registry.

prometheus-client's :class:`~prometheus_client.ProcessCollector` (``process_*``: resident and
virtual memory, CPU seconds, open and maximum file descriptors, start time; read from
``/proc`` on Linux, none elsewhere) and :class:`~prometheus_client.PlatformCollector`
(``python_info``). The names are :data:`streameval.export.names.PROCESS`. Memory is how an
operator sizes the daemon (the open lists, the judgments, the windows all live in it).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector


def register_process_metrics(registry: CollectorRegistry) -> None:
    """Register the process and platform collectors in ``registry`` (a registry of its own:
    the global one of prometheus-client has them already)."""
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
