"""Issue 28 §4: every configuration mistake an operator can make (a file, an environment
variable) is one line on stderr naming the key or the variable and the fix, a non-zero exit,
never a traceback; a variable that sets nothing is named in a warning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from streameval.config import Settings, load_settings
from streameval.config.env import SCRIPT_VARIABLES, check_environment
from streameval.errors import ConfigError


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def _replay(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``streameval replay`` of an empty log, as an operator runs it: (exit code, stderr)."""
    log = tmp_path / "empty.jsonl"
    log.write_text("")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "replay", *args, str(log)],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.returncode, proc.stderr


def _one_line_error(rc: int, stderr: str) -> str:
    assert rc != 0
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("streameval: error: ")
    return lines[0]


def test_a_list_variable_that_is_not_json_names_the_variable_and_the_json(
    tmp_path: Path,
) -> None:
    line = _one_line_error(*_replay(tmp_path, env={"STREAMEVAL_EVALUATION__KS": "[1, 5"}))
    assert "STREAMEVAL_EVALUATION__KS" in line
    assert "JSON list" in line and "'[1, 3, 5, 10]'" in line


def test_a_table_variable_that_is_not_json_names_the_variable(tmp_path: Path) -> None:
    line = _one_line_error(*_replay(tmp_path, env={"STREAMEVAL_EVALUATION__CONTROL": "arm"}))
    assert "STREAMEVAL_EVALUATION__CONTROL" in line and "JSON object" in line


@pytest.mark.parametrize(
    ("name", "value", "key", "expected"),
    [
        ("STREAMEVAL_EVALUATION__KS", "1,5", "ks", (1, 5)),
        ("STREAMEVAL_EVALUATION__KS", " 1 , 5 ", "ks", (1, 5)),
        ("STREAMEVAL_EVALUATION__KS", "5", "ks", (5,)),
        ("STREAMEVAL_EVALUATION__KS", "[1, 5]", "ks", (1, 5)),
        ("STREAMEVAL_EVALUATION__WINDOWS", "1m,5m", "windows", (60_000, 300_000)),
        ("STREAMEVAL_EVALUATION__SEGMENT_LABELS", "ranker,arm,tenant", "segment_labels", None),
    ],
)
def test_a_list_of_plain_values_may_be_comma_separated(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, key: str, expected: object
) -> None:
    monkeypatch.setenv(name, value)
    got = getattr(load_settings().evaluation, key)
    assert got == (expected if expected is not None else ("ranker", "arm", "tenant"))


def test_topics_may_be_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMEVAL_KAFKA__TOPICS", "imps,clicks")
    monkeypatch.setenv("STREAMEVAL_KAFKA__JUDGMENT_TOPICS", "grades")
    s = load_settings()
    assert (s.kafka.topics, s.kafka.judgment_topics) == (("imps", "clicks"), ("grades",))


def test_a_binary_config_file_is_one_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(b"[evaluation]\n\xff\xfe\x00\x01 binary")
    line = _one_line_error(*_replay(tmp_path, "--config", str(cfg)))
    assert str(cfg) in line and "UTF-8" in line


def test_a_typo_in_a_file_key_suggests_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[evaluation]\nkz = [1, 5]\n")
    line = _one_line_error(*_replay(tmp_path, "--config", str(cfg)))
    assert "evaluation.kz" in line and "did you mean `ks`?" in line


def test_a_typo_in_a_variable_key_names_the_variable_and_suggests(tmp_path: Path) -> None:
    line = _one_line_error(*_replay(tmp_path, env={"STREAMEVAL_EVALUATION__KZ": "[1]"}))
    assert "STREAMEVAL_EVALUATION__KZ" in line
    assert "did you mean STREAMEVAL_EVALUATION__KS?" in line


def test_a_typo_in_a_variable_section_is_a_warning_not_silence(tmp_path: Path) -> None:
    rc, stderr = _replay(tmp_path, env={"STREAMEVAL_EVALUATON__KS": "[1]"})
    assert rc == 0 and "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if "STREAMEVAL_EVALUATON__KS" in line]
    assert len(lines) == 1
    assert "sets nothing" in lines[0]
    assert "did you mean STREAMEVAL_EVALUATION__KS?" in lines[0]


def test_every_variable_that_sets_nothing_is_named_once() -> None:
    environ = {
        "STREAMEVAL_EVALUATON__KS": "[1]",
        "STREAMEVAL_METRIC__PORT": "1",
        "STREAMEVAL_KAFKA__TOPICS": "a,b",  # a setting
        "STREAMEVAL_KAFKA_HOME": "/opt/kafka",  # read by scripts/kafka-broker
        "STREAMEVAL_REGISTRY_DATA_DIR": "/tmp/r",  # read by scripts/schema-registry
        "OTHER": "x",
    }
    warnings = check_environment(Settings, environ)
    assert len(warnings) == 2
    assert warnings[0].startswith("STREAMEVAL_EVALUATON__KS ")
    assert warnings[1].startswith("STREAMEVAL_METRIC__PORT ")
    assert "STREAMEVAL_METRICS__PORT" in warnings[1]


def test_the_script_variables_are_those_the_scripts_read() -> None:
    """The allow-list holds exactly the STREAMEVAL_ variables (not settings) the repository's
    scripts read: one added to a script without the list would be warned about."""
    import re

    root = Path(__file__).resolve().parents[2]
    found: set[str] = set()
    for script in ("scripts/kafka-broker", "scripts/schema-registry"):
        found |= set(re.findall(r"STREAMEVAL_[A-Z0-9_]+", (root / script).read_text()))
    found = {v for v in found if "__" not in v and v != "STREAMEVAL_"}
    assert found and found <= SCRIPT_VARIABLES


def test_an_unreadable_variable_raises_config_error_in_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STREAMEVAL_EVALUATION", "{not json")
    with pytest.raises(ConfigError, match=r"STREAMEVAL_EVALUATION: .*JSON object"):
        load_settings()


@pytest.mark.parametrize(
    ("name", "value", "key"),
    [
        ("STREAMEVAL_METRICS__PORT", "abc", "metrics.port"),
        ("STREAMEVAL_EVALUATION__BUCKET", "-5s", "evaluation.bucket"),
        ("STREAMEVAL_EVALUATION", '{"max_segments": 0}', "evaluation.max_segments"),
    ],
)
def test_a_value_that_parses_but_is_wrong_names_the_variable_that_gave_it(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, key: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert key in message and f"(from the environment variable {name})" in message
    assert "\n" not in message


def test_a_wrong_value_from_the_file_does_not_blame_a_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STREAMEVAL_METRICS__PORT", "abc")  # the file's key wins over it
    config = tmp_path / "c.toml"
    config.write_text('[metrics]\nport = "x"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(config)
    assert "metrics.port" in str(info.value) and "environment variable" not in str(info.value)
