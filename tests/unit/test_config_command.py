"""``streameval config`` (DESIGN §7): the defaults as TOML, a file's effective configuration with
secrets masked, one line and exit 2 for an invalid file; what it prints loads back."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from streameval.cli import main
from streameval.config import Settings, load_settings
from tests.foreign_shapes import SEGMENT_TOML, SNOWPLOW_TOML

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def _config(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["config", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _keys(model: BaseModel, prefix: str = "") -> set[str]:
    """Every key of a settings model: its fields, and the fields of its sub-tables."""
    keys: set[str] = set()
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            keys |= _keys(value, f"{prefix}{name}.")
        else:
            keys.add(f"{prefix}{name}")
    return keys


def test_the_defaults_load_back_as_the_defaults(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _config(capsys)
    assert (code, err) == (0, "")
    printed = tmp_path / "defaults.toml"
    printed.write_text(out)
    assert load_settings(printed) == Settings()
    code, again, _ = _config(capsys, str(printed))
    assert code == 0
    assert tomllib.loads(again) == tomllib.loads(out)


def test_every_key_is_printed_set_or_as_a_commented_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = _config(capsys)
    tables: dict[str, list[str]] = {}
    table = ""
    for line in out.splitlines():
        if line.startswith("["):
            table = line.strip("[]")
        elif " = " in line:
            tables.setdefault(table, []).append(line.lstrip("# ").split(" = ")[0])
    printed = {f"{t}.{k}" for t, keys in tables.items() for k in keys}
    expected = _keys(Settings())
    assert expected <= printed, sorted(expected - printed)
    # the unset ones (no TOML null) are the commented ones
    assert "# sasl_password = (not set)" in out
    assert "# schema_registry_url = (not set)" in out
    # each key's meaning is above it, from the #: comments of the streameval/config/ package
    assert "# the consumer group of `topics`" in out


@pytest.mark.parametrize("fixture", [SNOWPLOW_TOML, SEGMENT_TOML])
def test_a_files_effective_configuration_loads_back_to_the_same_settings(
    fixture: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _config(capsys, str(fixture))
    assert code == 0
    printed = tmp_path / "effective.toml"
    printed.write_text(out)
    assert load_settings(printed) == load_settings(fixture)


def test_awkward_keys_and_strings_survive_the_round_trip(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = tmp_path / "s.avsc"
    schema.write_text("{}")
    cfg = tmp_path / "streameval.toml"
    cfg.write_text(
        f"""
[kafka]
group_id = 'quote " back\\\\slash tab\t é \u2603'
[input]
avro_schemas = {{ 7 = '{schema}' }}
[input.files."events-*.jsonl"]
format = "ubi"
[input.topics."web.events"]
format = "native"
"""
    )
    code, out, _ = _config(capsys, str(cfg))
    assert code == 0
    printed = tmp_path / "effective.toml"
    printed.write_text(out)
    again = load_settings(printed)
    assert again == load_settings(cfg)
    assert again.kafka.group_id == 'quote " back\\\\slash tab\t é \u2603'
    assert again.input.files["events-*.jsonl"].format == "ubi"


def test_secrets_are_masked_from_the_file_and_from_the_environment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "streameval.toml"
    cfg.write_text(
        '[kafka]\nsecurity_protocol = "SASL_SSL"\nsasl_mechanism = "PLAIN"\n'
        'sasl_username = "svc"\nsasl_password = "hunter2-from-file"\n'
    )
    monkeypatch.setenv("STREAMEVAL_METRICS__BASIC_AUTH_USERNAME", "prom")
    monkeypatch.setenv("STREAMEVAL_METRICS__BASIC_AUTH_PASSWORD", "s3cret-from-env")
    monkeypatch.setenv("STREAMEVAL_KAFKA__TOPICS", '["a","b"]')
    code, out, _ = _config(capsys, str(cfg))
    assert code == 0
    assert "hunter2" not in out
    assert "s3cret" not in out
    assert 'sasl_password = "********"' in out
    assert 'basic_auth_password = "********"' in out
    # the environment is in it, over the file
    assert 'topics = ["a", "b"]' in out
    assert 'sasl_username = "svc"' in out


def test_effective_without_a_file_is_the_environment_alone(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMEVAL_KAFKA__GROUP_ID", "from-env")
    _, defaults, _ = _config(capsys)
    assert 'group_id = "streameval"' in defaults  # the defaults ignore the environment
    code, out, _ = _config(capsys, "--effective")
    assert code == 0
    assert 'group_id = "from-env"' in out


def test_an_invalid_file_is_one_line_naming_the_key_and_exit_2(tmp_path: Path) -> None:
    cfg = tmp_path / "streameval.toml"
    cfg.write_text('[evaluation]\nks = [0, 5]\n[kafka]\nconsumer = "rdkafka"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "config", str(cfg)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "evaluation.ks.0" in lines[0]
    assert "kafka.consumer" in lines[0]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("text", "names"),
    [("[kafka\n", "not valid TOML"), ('[metrics]\nport = "x"\n', "metrics.port")],
)
def test_unreadable_and_mistyped_files_fail_in_one_line(
    text: str, names: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = tmp_path / "streameval.toml"
    cfg.write_text(text)
    code, out, err = _config(capsys, str(cfg))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert names in err
    code, _, err = _config(capsys, str(tmp_path / "missing.toml"))
    assert code == 2
    assert "cannot read config file" in err
