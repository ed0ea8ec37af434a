"""The one exception root of streameval, and its small subclasses.

Bad *events* are never exceptions: the decoder returns them as
:class:`~streameval.events.decode.Invalid` values. Exceptions are for the operator's
mistakes (configuration) and for broken infrastructure.
"""


class StreamevalError(Exception):
    """Root of every error streameval raises on purpose."""


class ConfigError(StreamevalError):
    """A setting is missing or wrong; the message names the key."""


class InputError(StreamevalError):
    """An input file or stream cannot be opened or read at all."""


class KafkaUnavailableError(StreamevalError):
    """The broker or a topic cannot be reached at start."""


class FencedError(ConfigError):
    """The broker fenced this member: another instance joined the group with the same
    ``kafka.group_instance_id`` (static membership) and took its partitions over."""

    def __init__(self, instance_id: str | None) -> None:
        super().__init__(
            f"kafka.group_instance_id: {instance_id!r} is used by another running instance, "
            "which the group now reads with; give each instance its own id (e.g. the pod's "
            "name, $HOSTNAME)"
        )
