"""MetricSpec: defaults, normalization of ks, and every rejected declaration."""

import pytest

from streameval.errors import ConfigError, StreamevalError
from streameval.score import MetricSpec, MetricSpecError


def test_defaults_match_design() -> None:
    spec = MetricSpec()
    assert (spec.ks, spec.gain, spec.discount, spec.discount_base) == (
        (1, 3, 5, 10),
        "linear",
        "log2",
        2.0,
    )
    assert spec.max_k == 10


def test_ks_are_sorted_and_deduplicated() -> None:
    assert MetricSpec(ks=(10, 1, 5, 5, 3)).ks == (1, 3, 5, 10)


def test_spec_is_frozen_and_hashable() -> None:
    spec = MetricSpec(ks=(3, 1))
    with pytest.raises(AttributeError):
        spec.gain = "exponential"  # type: ignore[misc]
    assert spec == MetricSpec(ks=(1, 3))
    assert hash(spec) == hash(MetricSpec(ks=(1, 3)))


def test_integer_base_is_stored_as_float() -> None:
    base = MetricSpec(discount="jarvelin", discount_base=3).discount_base
    assert base == 3.0
    assert isinstance(base, float)


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"ks": ()}, "ks"),
        ({"ks": (0,)}, "ks"),
        ({"ks": (-3, 5)}, "ks"),
        ({"ks": (1001,)}, "ks"),
        ({"ks": (2.5,)}, "ks"),
        ({"ks": (True,)}, "ks"),
        ({"gain": "quadratic"}, "gain"),
        ({"discount": "log10"}, "discount"),
        ({"discount_base": 1.0}, "discount_base"),
        ({"discount_base": 0.5}, "discount_base"),
        ({"discount_base": float("inf")}, "discount_base"),
        ({"discount_base": float("nan")}, "discount_base"),
        ({"discount_base": "2"}, "discount_base"),
    ],
)
def test_invalid_declarations_name_the_key(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(MetricSpecError) as info:
        MetricSpec(**kwargs)  # type: ignore[arg-type]
    assert str(info.value).startswith(f"{key}:")
    assert isinstance(info.value, ConfigError)
    assert isinstance(info.value, StreamevalError)
