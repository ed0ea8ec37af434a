"""Position-debiased implicit relevance (DESIGN §12; docs/propensity.md).

* :mod:`~streameval.propensity.estimate`: the examination propensity per rank from the pair
  sums that intervention harvesting collects (Agarwal et al., WSDM 2019): weighted least squares
  on the log ratios, rank 1 = 1, with a delta-method standard error per rank. Pure.
* :mod:`~streameval.propensity.table`: the state, a capped table per (query, doc) of
  impressions and interactions per rank, and the harvested pair sums kept up to date with it.
* :mod:`~streameval.propensity.scoring`: the ``implicit_debiased`` gains (interaction gain over
  the clipped propensity of its rank) and the query's pooled ideal. Pure.
* :mod:`~streameval.propensity.source`: the consumer the pipeline calls once per finalized list:
  scores it with the state as it is, then adds the list to the state.
"""

from streameval.propensity.estimate import Estimate, estimate
from streameval.propensity.scoring import ips_gains, pooled_relevance
from streameval.propensity.source import DebiasedSource, with_propensity
from streameval.propensity.table import PositionTable
from streameval.values import IMPLICIT_DEBIASED

__all__ = [
    "IMPLICIT_DEBIASED",
    "DebiasedSource",
    "Estimate",
    "PositionTable",
    "estimate",
    "ips_gains",
    "pooled_relevance",
    "with_propensity",
]
