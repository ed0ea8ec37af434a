"""Errors of the metric core.

Both derive from :class:`streameval.errors.StreamevalError`; a wrong metric declaration is
a configuration mistake, so :class:`MetricSpecError` is a :class:`ConfigError` and its
message names the setting (``ks``, ``gain``, ``discount``, ``discount_base``).
"""

from streameval.errors import ConfigError, StreamevalError


class MetricSpecError(ConfigError):
    """A metric declaration (:class:`~streameval.score.spec.MetricSpec`) is invalid."""


class ScoreInputError(StreamevalError):
    """A scoring function was called with arguments outside its domain (k < 1, rank < 1, …)."""
