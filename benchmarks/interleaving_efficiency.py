"""Relative efficiency of team-draft interleaving against A/B tests of NDCG@10, measured with
common random numbers: how many impressions interleaving needs per impression an A/B test needs.

    .venv/bin/python benchmarks/interleaving_efficiency.py [--seeds 8] [--samples 60] [--json F]

``interleaving.sensitivity`` (``bench_interleaving.py``) counts impressions until each test's
alarm, seed by seed; its stopping times are skewed, and the ratio of their medians is known only
to ±25 % after 100 seeds (78 minutes). The ratio it estimates has a closed form that can be
measured far more precisely. Both tests sum per-impression evidence under a normal mixture tuned
alike (an oracle τ on each side, the same α), so the impressions each needs go as the inverse of
its Fisher information per impression, and their ratio tends to the ratio of informations
(Pitman's asymptotic relative efficiency; Lehmann & Romano 2005, §13.2; the sensitivity measure
of Chapelle, Joachims, Radlinski & Yue 2012 is the same quantity counted in impressions):

* interleaving: each impression gives X = +1 (the treatment won), −1 (lost) or 0 (a tie, or no
  click); the detector sums X over decisive lists with variance proxy 1, so its information per
  impression is ``E[X]² / P(X ≠ 0)``;
* an A/B split (half the impressions to each arm; a list counts when it has an NDCG@10): the
  difference of the arms' means, information ``Δ² / (2 σ_C² / s_C + 2 σ_T² / s_T)`` per
  impression, ``s`` an arm's share of lists with an NDCG. Beside it the same with each list
  centred on its query's mean (within-query variance): the most any control variate on the
  query, as the ``vs_control`` detector's reference or CUPED (Deng, Xu, Kohavi & Walker 2013),
  can take away.

The population is the simulator's (``SimConfig`` defaults, as the benchmark: 1 000 queries,
Zipf(1.0) popularity, 25 candidates, a page of 10, examination 1/i, P(click | grade) = 0.02,
0.15, 0.4, 0.7, half of every query's candidates judged). For every seed (a catalogue), query q
and sample m, one set of draws serves four pages: the control's ranking and the treatment's
(each ``rank`` with its own seeded noise), the treatment's regressed copy (3 % of its results
replaced, ``degrade``), the team-draft page of control and treatment and of control and the
regressed treatment (the same coin), each clicked by the same seeded user. The pages go through
the real pipeline, which scores judged and implicit NDCG@10 and credits the interleaved ones.
Expectations are popularity-weighted over queries. The draws are shared, so a regressed page
differs from its unregressed twin only where results were replaced: the effects are estimated
as paired differences (with no regression the outcome's mean is 0, the two rankers being equal),
which is what makes a few million pages enough. The 95 % intervals are percentile bootstraps
over the samples m (each a replicate of the whole population; Efron & Tibshirani 1993).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from streameval.config import EvaluationSettings
from streameval.engine import Pipeline
from streameval.sim import SimConfig, catalogue_of
from streameval.sim.behaviour import Shown, degrade, rank
from streameval.sim.interleaving import team_draft
from streameval.values import JUDGED, ScoredList

START_MS = 1_700_000_000_000
K = 10
REGRESSION = 0.03
#: the pages served per (query, sample): the A/B arms' (the control's, the treatment's and its
#: regressed twin), and the interleaved pages without and with the regression
PAGES = ("control", "treatment", "treatment_regressed", "interleaved", "interleaved_regressed")
AB_PAGES = PAGES[:3]
IL_PAGES = PAGES[3:]


@dataclass(frozen=True)
class Population:
    """One seed's scored pages: per page kind, an array (queries, samples)."""

    popularity: np.ndarray  # (Q,)
    judged: dict[str, np.ndarray]  # AB_PAGES: NDCG@10, NaN = none
    implicit: dict[str, np.ndarray]
    outcome: dict[str, np.ndarray]  # IL_PAGES: the treatment's +1 (won), -1 (lost), 0


def population(
    seed: int, samples: int, regression: float = REGRESSION, **knobs: float
) -> Population:
    """Serve, click and score every (query, sample) of ``seed``'s catalogue (module doc);
    ``knobs``: population settings of :class:`SimConfig` (``examination_decay``,
    ``zipf_exponent``)."""
    sim = SimConfig(seed=seed, judgment_rate=0.0, **knobs)  # type: ignore[arg-type]
    catalogue = catalogue_of(sim)
    n_queries = len(catalogue.queries)
    names = (sim.control.name, sim.treatment.name)
    # the pools' helpers (benchmarks/_detect_sim.py), imported here as detection.py does: this
    # module is also imported as benchmarks.interleaving_efficiency, by its unit tests
    from _detect_sim import offer_start_judgments, serve_page

    evaluation = EvaluationSettings(ks=(K,), allowed_lateness=10**12, max_open_lists=10**8)
    scored: dict[str, ScoredList] = {}
    pipeline = Pipeline(evaluation, on_scored=lambda s: scored.__setitem__(s.request_id, s))
    offer_start_judgments(pipeline, sim)  # half of every query's candidates
    t = START_MS + 1
    for q, query in enumerate(catalogue.queries):
        for m in range(samples):
            draws = f"{seed}:{q}:{m}"
            control = rank(query, sim.control.noise, sim.page_size, random.Random(f"c:{draws}"))
            treatment = rank(query, sim.treatment.noise, sim.page_size, random.Random(f"t:{draws}"))
            regressed = degrade(treatment, regression, q, catalogue, random.Random(f"d:{draws}"))
            pages: dict[str, tuple[Shown, tuple[str, ...] | None]] = {
                "control": (control, None),
                "treatment": (treatment, None),
                "treatment_regressed": (regressed, None),
            }
            for kind, other in (("interleaved", treatment), ("interleaved_regressed", regressed)):
                pages[kind] = team_draft(
                    control, other, names, sim.page_size, random.Random(f"td:{draws}")
                )
            for kind, (shown, teams) in pages.items():
                user = random.Random(f"u:{draws}")  # the same user for every page of the draw
                rid = f"{q}.{m}.{PAGES.index(kind)}"
                serve_page(pipeline, rid, t, query, shown, sim=sim, user=user, teams=teams)
            t += 1
    pipeline.finish()
    shape = (n_queries, samples)
    judged = {k: np.full(shape, np.nan) for k in AB_PAGES}
    implicit = {k: np.full(shape, np.nan) for k in AB_PAGES}
    outcome = {k: np.zeros(shape) for k in IL_PAGES}
    for rid, s in scored.items():
        q, m, page = (int(x) for x in rid.split("."))
        kind = PAGES[page]
        if kind in outcome:
            won = {
                o for r, _, o in (s.interleaved.outcomes if s.interleaved else ()) if r == names[1]
            }
            outcome[kind][q, m] = 1.0 if "win" in won else -1.0 if "loss" in won else 0.0
            continue
        for source in s.sources:
            into = judged if source.relevance == JUDGED else implicit
            value = source.ndcg[0]
            into[kind][q, m] = np.nan if value is None else value
    popularity = np.array([catalogue.popularity(i) for i in range(n_queries)])
    return Population(popularity, judged, implicit, outcome)


def _arm_moments(
    values: np.ndarray, weight: np.ndarray, *, centred: bool
) -> tuple[float, float, float]:
    """(share of lists with a value, mean, variance) of one arm, weighted by popularity;
    ``centred``: the variance within queries (each query's own mean removed, unbiased)."""
    ok = ~np.isnan(values)
    x = np.where(ok, values, 0.0)
    n_q = ok.sum(axis=1)
    w_ok = (weight * n_q).sum()
    share = w_ok / (weight * values.shape[1]).sum()
    mean = (weight * x.sum(axis=1)).sum() / w_ok
    if not centred:
        var = (weight * (x * x).sum(axis=1)).sum() / w_ok - mean * mean
        return share, mean, var
    with np.errstate(invalid="ignore", divide="ignore"):
        mu_q = x.sum(axis=1) / n_q
        ss_q = ((np.where(ok, values - mu_q[:, None], 0.0)) ** 2).sum(axis=1)
        per_list = np.where(n_q > 1, ss_q / (n_q - 1), 0.0)  # unbiased within-query variance
    var = (weight * n_q * per_list).sum() / w_ok
    return share, mean, var


def efficiencies(pops: list[Population], columns: list[np.ndarray]) -> dict[str, float]:
    """The information ratios (A/B's over interleaving's: impressions interleaving needs per
    impression of the A/B test) and the effects, over the sample columns chosen per seed."""
    w_all = np.concatenate([p.popularity for p in pops]) / len(pops)
    cat = {
        f"{attr}.{key}": np.concatenate(
            [getattr(p, attr)[key][:, c] for p, c in zip(pops, columns, strict=True)]
        )
        for attr, keys in (("judged", AB_PAGES), ("implicit", AB_PAGES), ("outcome", IL_PAGES))
        for key in keys
    }
    m = cat["outcome.interleaved"].shape[1]
    weight = w_all / m
    diff = cat["outcome.interleaved_regressed"] - cat["outcome.interleaved"]
    effect = float((weight[:, None] * diff).sum())  # E[X] under the regression (E[X0] = 0)
    decisive = float((weight[:, None] * np.abs(cat["outcome.interleaved_regressed"])).sum())
    il_info = effect * effect / decisive if decisive > 0 else 0.0
    out = {
        "preference": effect,
        "decisive_share": decisive,
        "preference_decisive": effect / decisive if decisive > 0 else 0.0,
    }
    for source in ("judged", "implicit"):
        # the arms' difference of means, from the treatment's paired pages (its unregressed
        # twin is distributed as the control's page: the rankers are equally good)
        _, before, _ = _arm_moments(cat[f"{source}.treatment"], w_all, centred=False)
        _, after, _ = _arm_moments(cat[f"{source}.treatment_regressed"], w_all, centred=False)
        delta = before - after
        out[f"{source}_drop"] = delta / before
        for centred in (False, True):
            s_c, _, var_c = _arm_moments(cat[f"{source}.control"], w_all, centred=centred)
            s_t, _, var_t = _arm_moments(
                cat[f"{source}.treatment_regressed"], w_all, centred=centred
            )
            noise = 2 * var_c / s_c + 2 * var_t / s_t
            ab_info = delta * delta / noise if noise > 0 else math.inf
            ratio = ab_info / il_info if il_info > 0 else math.inf
            out[f"{source}{'_centred' if centred else ''}"] = ratio
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--seeds", type=int, default=8, help="catalogues (default 8)")
    parser.add_argument("--samples", type=int, default=60, help="draws per query (default 60)")
    parser.add_argument("--draws", type=int, default=2_000, help="bootstrap draws")
    parser.add_argument(
        "--examination-decay",
        type=float,
        default=1.0,
        help="position bias: rank i examined with probability 1/i**d (default 1; 0: every rank)",
    )
    parser.add_argument(
        "--zipf", type=float, default=1.0, help="the query mix's head (default 1; 1.5: heavier)"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    pops = []
    for seed in range(args.seeds):
        knobs = {"examination_decay": args.examination_decay, "zipf_exponent": args.zipf}
        pops.append(population(seed, args.samples, **knobs))
        print(f"seed {seed}: {len(pops[-1].popularity)} queries x {args.samples} draws", flush=True)
    every = [np.arange(args.samples)] * len(pops)
    point = efficiencies(pops, every)
    rng = np.random.default_rng(0)
    boot = [
        efficiencies(pops, [rng.integers(0, args.samples, args.samples) for _ in pops])
        for _ in range(args.draws)
    ]
    interval = {
        key: (float(np.percentile([b[key] for b in boot], 2.5)),
              float(np.percentile([b[key] for b in boot], 97.5)))
        for key in point
    }  # fmt: skip
    pages = sum(len(p.popularity) for p in pops) * args.samples * len(PAGES)
    print(
        f"\n{args.seeds} catalogues x {args.samples} draws per query ({pages} pages scored); "
        f"a {REGRESSION:.0%} regression of the treatment; examination "
        f"1/i**{args.examination_decay}, Zipf({args.zipf})"
    )
    labels = {
        "judged_drop": "judged NDCG@10 relative drop (A/B arms)",
        "implicit_drop": "implicit NDCG@10 relative drop (A/B arms)",
        "preference": "interleaving: treatment's mean outcome per impression",
        "decisive_share": "interleaving: share of decisive lists",
        "preference_decisive": "interleaving: mean outcome on decisive lists",
        "judged": "impressions interleaving needs per A/B impression, A/B on judged NDCG@10",
        "judged_centred": "  the same, A/B judged NDCG@10 query-centred",
        "implicit": "impressions interleaving needs per A/B impression, A/B on implicit NDCG@10",
        "implicit_centred": "  the same, A/B implicit NDCG@10 query-centred",
    }
    for key, label in labels.items():
        low, high = interval[key]
        print(f"{label}: {point[key]:.4f} [{low:.4f}, {high:.4f}]")
    if args.json:
        record = {"point": point, "interval95": interval, "seeds": args.seeds}
        args.json.write_text(json.dumps(record | {"samples": args.samples}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
