"""streameval: live NDCG@k of a search system, computed from its event stream.

The data path is visible in the package layout:
``events`` (decode) → ``join`` (judged ranked lists) → ``score`` (metric arithmetic)
→ ``windows`` (event-time sufficient statistics) → ``export`` (Prometheus).
"""

__version__ = "0.1.0"
