"""The Helm chart (deploy/helm/streameval) rendered by a real `helm`, and the schemas its
manifests are validated against, for tests/deploy/test_helm_chart.py.

`helm` is the one scripts/install-helm builds from the Go module proxy (pinned there); the
Prometheus Operator's CRDs come from the Go module cache (the same script downloads them).
Missing either: a failure in CI (CI=true), a skip on a developer machine.
"""

from __future__ import annotations

import copy
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.protocols
import pytest
import yaml

from tests.ci import in_ci
from tests.deploy.deployfiles import DEPLOY, ROOT

CHART = DEPLOY / "helm" / "streameval"
CHART_CI_VALUES = tuple(sorted((CHART / "ci").glob("*-values.yaml")))
INSTALL_HELM = ROOT / "scripts" / "install-helm"
RELEASE = "streameval"
NAMESPACE = "search"


def _missing(message: str) -> None:
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@cache
def _install_helm(flag: str) -> tuple[int, str, str]:
    result = subprocess.run(
        [str(INSTALL_HELM), flag], capture_output=True, text=True, timeout=300, check=False
    )
    return result.returncode, result.stdout.strip(), result.stderr.strip()


def helm_or_skip() -> str:
    """The pinned helm that scripts/install-helm builds."""
    code, path, err = _install_helm("--helm-path")
    if code != 0 or not Path(path).is_file():
        _missing(f"helm not built ({path or err}): run scripts/install-helm")
    return path


def crd_dir_or_skip() -> Path:
    """example/prometheus-operator-crd of the Prometheus Operator module (Go module cache)."""
    code, path, err = _install_helm("--crd-dir")
    if code != 0 or not Path(path).is_dir():
        _missing(f"Prometheus Operator CRDs not found ({err}): run scripts/install-helm")
    return Path(path)


def helm(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [helm_or_skip(), *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )


@dataclass(frozen=True)
class Rendered:
    """The manifests of one `helm template`, by kind and name."""

    objects: tuple[dict[str, Any], ...]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == kind]

    def one(self, kind: str, name: str | None = None) -> dict[str, Any]:
        found = [o for o in self.of_kind(kind) if name is None or o["metadata"]["name"] == name]
        assert len(found) == 1, f"{len(found)} {kind} {name or ''}"
        return found[0]

    def kinds(self) -> set[str]:
        return {o["kind"] for o in self.objects}


def template_args(values: Sequence[Path] = (), sets: Mapping[str, str] | None = None) -> list[str]:
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    for path in values:
        args += ["-f", str(path)]
    for key, value in (sets or {}).items():
        args += ["--set", f"{key}={value}"]
    return args


@cache
def _render(values: tuple[Path, ...], sets: tuple[tuple[str, str], ...]) -> Rendered:
    result = helm(*template_args(values, dict(sets)))
    assert result.returncode == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    return Rendered(tuple(docs))


def render(values: Sequence[Path] = (), sets: Mapping[str, str] | None = None) -> Rendered:
    """`helm template` of the chart (cached per arguments; callers must not mutate)."""
    return _render(tuple(values), tuple(sorted((sets or {}).items())))


def container(rendered: Rendered) -> dict[str, Any]:
    (only,) = rendered.one("StatefulSet")["spec"]["template"]["spec"]["containers"]
    return dict(only)


# --- the Prometheus Operator's CRDs as JSON Schemas -------------------------------------------


@cache
def crd_schema(kind: str) -> dict[str, Any]:
    """The openAPIV3Schema of monitoring.coreos.com/v1 `kind`, made strict: an object schema
    with `properties` and nothing else that admits unknown fields rejects them (the API server
    would prune them silently, so a misspelt field would vanish without a word)."""
    path = crd_dir_or_skip() / f"monitoring.coreos.com_{kind.lower()}s.yaml"
    crd = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert crd["spec"]["names"]["kind"] == kind
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return strict(version["schema"]["openAPIV3Schema"])


def python_pattern(pattern: str) -> str:
    """A CRD `pattern` (Go's RE2 syntax) for Python's re: RE2 takes an inline flag group like
    `(?i)` anywhere, Python only at the start."""
    flags = "".join(re.findall(r"\(\?[a-z]+\)", pattern))
    return flags + re.sub(r"\(\?[a-z]+\)", "", pattern)


def crd_validator(kind: str) -> jsonschema.protocols.Validator:
    """A validator of `kind` objects against its strict CRD schema (draft 7 semantics, which
    OpenAPI v3's schema subset follows for what the CRDs use)."""
    return jsonschema.Draft7Validator(crd_schema(kind))


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI v3 schema with additionalProperties false on every object schema
    that lists its properties and neither keeps unknown fields nor sets additionalProperties."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: strict(value) for key, value in copy.copy(schema).items()}
    if isinstance(result.get("pattern"), str):
        result["pattern"] = python_pattern(result["pattern"])
    if (
        "properties" in result
        and "additionalProperties" not in result
        and not result.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result
