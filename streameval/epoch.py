"""Event times as people read them, and the one rule for a timestamp that is surely in seconds.

Native events carry epoch *milliseconds* (or RFC 3339 strings). A producer that writes epoch
seconds instead (``1767225600`` for 2026-01-01) gives an event time in January 1970: valid,
and then late in every window. Such values are not rejected or re-read (the figures stay what
the contract says: DESIGN §2), but they are pointed out: by ``inspect`` next to each record, by
the daemon and ``replay`` in their log (:class:`~streameval.log_limits.SecondsTimestampLog`).

The rule: an event time below :data:`SECONDS_BELOW_MS` (10^11 ms, 1973-03-03T09:46:40Z) and not
negative. As epoch milliseconds that is before March 1973, years before any search log; as
epoch seconds it is any date from 1970 to 5138, so every current seconds timestamp (about
1.8e9) falls in it, at a 50-fold distance from the bound either way.
"""

from __future__ import annotations

from datetime import UTC, datetime

#: an epoch-ms event time below this (and >= 0) is almost surely epoch seconds
SECONDS_BELOW_MS = 10**11


def looks_like_seconds(ms: int) -> bool:
    """``ms`` (an event time, read as epoch milliseconds) is surely epoch seconds."""
    return 0 <= ms < SECONDS_BELOW_MS


def utc_text(ms: int) -> str:
    """``1767225600000`` -> ``"2026-01-01T00:00:00.000Z"``; out of datetime's range: ``"?"``."""
    try:
        moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return "?"
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def seconds_hint(ms: int) -> str:
    """What to tell of an event time :func:`looks_like_seconds` says is in seconds."""
    return (
        f"event time {ms} is {utc_text(ms)} as epoch milliseconds: probably epoch seconds "
        f"({utc_text(ms * 1000)}); event times are epoch milliseconds (or RFC 3339), a mapped "
        'source can say timestamp_unit = "s"'
    )
