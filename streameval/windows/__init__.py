"""Event-time windows: definitions (spec), runtime state (store), progress (watermark)."""

from streameval.windows.spec import WindowSpec, bucket_start, window_buckets
from streameval.windows.store import WindowStore
from streameval.windows.totals import Totals
from streameval.windows.watermark import WatermarkTracker

__all__ = [
    "Totals",
    "WatermarkTracker",
    "WindowSpec",
    "WindowStore",
    "bucket_start",
    "window_buckets",
]
