"""The traffic flags shared by ``streameval demo`` and ``streameval simulate``, and the
:class:`SimConfig` they describe."""

from __future__ import annotations

import argparse
from dataclasses import replace

from streameval.durations import format_duration, parse_duration
from streameval.sim.config import SimConfig

#: The default seed. Its traffic, through the default settings with the demo's defaults, shows no
#: spurious "regression" on the status page before the real one (some seeds do: the page looks at
#: every window on every tick, so by chance an A/A difference now and then clears its bands).
DEFAULT_SEED = 2


def duration(text: str) -> int:
    """argparse type: a duration ("90s", "10m", "1h") in milliseconds."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def optional_duration(text: str) -> int | None:
    """argparse type: a duration, or ``none`` / ``off`` for never."""
    if text.strip().lower() in {"none", "off", "never"}:
        return None
    return duration(text)


def share(text: str) -> float:
    """argparse type: a number within [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number within [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number within [0, 1], got {text!r}")
    return value


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def add_traffic_arguments(
    parser: argparse.ArgumentParser, *, rate: float, regression_at: int | None
) -> None:
    """The simulator's flags, with the command's own defaults for rate and regression time."""
    base = SimConfig()
    g = parser.add_argument_group("simulated traffic")
    g.add_argument(
        "--rate",
        type=positive,
        default=rate,
        help=f"impressions (result pages) per event second (default {rate:g})",
    )
    g.add_argument(
        "--duration",
        type=duration,
        default=None,
        metavar="DURATION",
        help="event time to simulate, e.g. 30m or 2h (default: until stopped)",
    )
    g.add_argument(
        "--queries",
        type=int,
        default=base.queries,
        help=f"distinct queries, Zipf-popular (default {base.queries})",
    )
    g.add_argument(
        "--split",
        type=share,
        default=base.treatment_share,
        metavar="SHARE",
        help=f"share of requests served by the treatment arm (default {base.treatment_share:g})",
    )
    at = "none" if regression_at is None else format_duration(regression_at)
    g.add_argument(
        "--regression-at",
        type=optional_duration,
        default=regression_at,
        metavar="DURATION",
        help=f"event time after the start at which the treatment ranker regresses, or none "
        f"(default {at})",
    )
    g.add_argument(
        "--regression-size",
        type=share,
        default=base.regression_size,
        metavar="SHARE",
        help="expected relative drop of the treatment's judged NDCG@k once regressed: 0.2 means "
        "20%% lower (each of its results is replaced by an off-topic document with this "
        f"probability; default {base.regression_size:g})",
    )
    g.add_argument(
        "--interleaving",
        action="store_true",
        help="serve every request one team-draft interleaved page of control and treatment "
        "(each result naming its ranker as its team) instead of an A/B split: the same click "
        "model and the same regression; scored as interleaving (DESIGN §10)",
    )
    g.add_argument(
        "--llm-judge",
        default="",
        metavar="MODEL",
        help="add an LLM judge (judge llm:MODEL) beside the raters: it grades the pairs judged "
        "at the start, then re-grades one every second (default: none; docs/judges.md)",
    )
    g.add_argument(
        "--llm-drift",
        type=float,
        default=0.0,
        metavar="GRADES_PER_HOUR",
        help="the LLM judge's grade bias, growing by this much per event hour (default 0)",
    )
    g.add_argument(
        "--noise",
        type=share,
        default=0.0,
        metavar="SHARE",
        help="share of impressions and clicks followed by a noise record (half duplicates, half "
        "invalid JSON), to see the intake accounting at work (default 0)",
    )
    g.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"random seed: the same seed gives the same traffic (default {DEFAULT_SEED})",
    )


def sim_config(args: argparse.Namespace) -> SimConfig:
    """The :class:`SimConfig` of parsed :func:`add_traffic_arguments` flags."""
    return replace(
        SimConfig(),
        seed=args.seed,
        rate=args.rate,
        duration_ms=args.duration,
        queries=args.queries,
        treatment_share=args.split,
        regression_at_ms=args.regression_at,
        regression_size=args.regression_size,
        noise_share=args.noise,
        interleaving=getattr(args, "interleaving", False),
        llm_judge=getattr(args, "llm_judge", ""),
        llm_drift=getattr(args, "llm_drift", 0.0),
    )
