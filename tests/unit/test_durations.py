import pytest

from streameval.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("10s", 10_000),
        ("5m", 300_000),
        ("1h", 3_600_000),
        ("1h30m", 5_400_000),
        ("250ms", 250),
        ("2d", 172_800_000),
        (" 1M ", 60_000),
        ("1500", 1_500),
        (42, 42),
    ],
)
def test_parse_duration(text: str | int, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize("bad", ["", "s", "10x", "1h 30m", "-5s", "1.5m", -1, 2.5, None, True])
def test_parse_duration_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0, "0s"), (60_000, "1m"), (5_400_000, "1h30m"), (10_000, "10s"), (1_250, "1s250ms")],
)
def test_format_duration_is_canonical_and_round_trips(ms: int, text: str) -> None:
    assert format_duration(ms) == text
    assert parse_duration(text) == ms
