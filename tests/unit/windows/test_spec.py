import pytest

from streameval.windows import WindowSpec, bucket_start, window_buckets


@pytest.mark.parametrize(
    ("ts", "bucket", "start"),
    [(0, 10_000, 0), (9_999, 10_000, 0), (10_000, 10_000, 10_000), (-1, 10_000, -10_000)],
)
def test_bucket_start_floors(ts: int, bucket: int, start: int) -> None:
    assert bucket_start(ts, bucket) == start


def test_window_covers_whole_buckets_before_the_horizon() -> None:
    # horizon 125 s, 1 min window of 10 s buckets: the bucket [120, 130) is not complete, so the
    # window is [60 s, 120 s): buckets 60, 70, ..., 110 -> six buckets
    assert list(window_buckets(125_000, 60_000, 10_000)) == [
        60_000,
        70_000,
        80_000,
        90_000,
        100_000,
        110_000,
    ]
    # exactly on a boundary: [60 s, 120 s) again
    assert list(window_buckets(120_000, 60_000, 10_000))[-1] == 110_000


def test_window_spec_name_and_validation() -> None:
    assert WindowSpec(3_600_000, 10_000).name == "1h"
    with pytest.raises(ValueError):
        WindowSpec(15_000, 10_000)
