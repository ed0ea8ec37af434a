"""Types of the extension module built from native/ (src/python.rs); see streameval.native."""

from collections.abc import Iterable, Mapping, Sequence

UNICODE_VERSION: str

def decode_native(raw: bytes, max_bytes: int = 1_048_576) -> tuple[object, ...]: ...

# --- scoring and the judgment table (native/src/score/, judgments.rs, judgment_rules.rs) ---

_Cutoffs = tuple[float, ...]
#: (outcome, ndcg per k (None: no value), dcg, idcg, coverage (judged source) or None)
_Source = tuple[str, tuple[float | None, ...], _Cutoffs, _Cutoffs, _Cutoffs | None]

def score_batch(
    grades: Iterable[Sequence[float]],
    pools: Iterable[Sequence[float]] | None = None,
    *,
    ks: Sequence[int],
    gain: str = "linear",
    discount: str = "log2",
    discount_base: float = 2.0,
    best_first: bool = False,
    ndcg_only: bool = False,
) -> list[tuple[_Cutoffs, _Cutoffs, _Cutoffs | None]] | list[_Cutoffs | None]: ...
def discount_table(n: int, discount: str = "log2", discount_base: float = 2.0) -> list[float]: ...

class GradeBatch:
    def __init__(
        self, grades: Iterable[Sequence[float]], pools: Iterable[Sequence[float]] | None = None
    ) -> None: ...
    def __len__(self) -> int: ...
    def score(
        self,
        *,
        ks: Sequence[int],
        gain: str = "linear",
        discount: str = "log2",
        discount_base: float = 2.0,
        best_first: bool = False,
        ndcg_only: bool = False,
    ) -> list[tuple[_Cutoffs, _Cutoffs, _Cutoffs | None]] | list[_Cutoffs | None]: ...

class ListScorer:
    def __init__(
        self,
        *,
        ks: Sequence[int],
        gain: str = "linear",
        discount: str = "log2",
        discount_base: float = 2.0,
        ideal: str = "pool",
        unjudged: str = "zero",
        no_relevance: str = "skip",
    ) -> None: ...
    def implicit_batch(
        self, doc_ids: Iterable[Sequence[str]], grades: Iterable[Mapping[str, float] | None]
    ) -> list[_Source]: ...
    def judged_batch(
        self,
        doc_ids: Iterable[Sequence[str]],
        judged: Iterable[Mapping[str, float] | None],
        pools: Iterable[Sequence[float] | None],
    ) -> list[_Source]: ...
    def judged_table_batch(
        self, query_ids: Sequence[str], doc_ids: Iterable[Sequence[str]], table: JudgmentTable
    ) -> list[_Source]: ...

class TeamCap:
    def __init__(self, max_teams: int) -> None: ...
    def list_outcomes(
        self,
        doc_ids: Sequence[str],
        teams: Sequence[str | None],
        clicked: Iterable[str],
        grades: Mapping[str, float] | None,
        credit: str,
    ) -> list[tuple[str, str, str]]: ...

class JudgmentTable:
    def __init__(self, max_judgment_ids: int) -> None: ...
    def apply(
        self,
        query_id: str,
        doc_id: str,
        judge: str,
        grade: float,
        timestamp: int,
        identity: str | bytes | None = None,
        key: bytes | None = None,
    ) -> str: ...
    def tombstone(self, key: bytes) -> str: ...
    def store_apply(
        self,
        query_id: str,
        doc_id: str,
        judge: str,
        grade: float,
        timestamp: int,
        replace: bool = False,
    ) -> bool: ...
    def delete(self, query_id: str, doc_id: str, judge: str) -> bool: ...
    def grade(self, query_id: str, doc_id: str) -> float | None: ...
    def grades(self, query_id: str) -> dict[str, float]: ...
    def pool(self, query_id: str) -> list[float]: ...
    def version(self, query_id: str) -> int: ...
    def judges_of(self, query_id: str) -> list[tuple[str, list[tuple[str, int, float]]]]: ...
    @property
    def ids(self) -> tuple[int, int]: ...
    def __len__(self) -> int: ...
