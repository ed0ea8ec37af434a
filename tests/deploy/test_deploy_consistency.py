"""docker-compose.yml, Dockerfile, Prometheus and Grafana provisioning agree with each other and
with DESIGN: ports, mounted paths, topics, config keys, sub-commands, datasource uid.

There is no compose plugin or Docker engine on the test machines, so the compose file is checked
by reading it (PyYAML), not by `docker compose config`.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import re
import shlex
import subprocess
import sys
import tomllib
from typing import Any

import pytest

from streameval.cli import build_parser
from tests.deploy.deployfiles import (
    CREATE_TOPICS,
    DASHBOARD_JSON,
    DASHBOARD_PROVIDERS,
    DASHBOARD_SOURCE,
    DATASOURCES,
    DESIGN_COMMANDS,
    DESIGN_CONFIG_KEYS,
    DESIGN_TOPICS,
    DOCKERFILE,
    DOCKERIGNORE,
    METRICS_PORT,
    PROMETHEUS_CONFIG,
    PROMETHEUS_DIR,
    ROOT,
    bind_mounts,
    command_list,
    compose,
    dashboard,
    host_path,
    load_yaml,
    panels,
    published_ports,
)

REQUIRED_SERVICES = {"kafka", "kafka-init", "streameval", "simulator", "prometheus", "grafana"}


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    loaded: dict[str, Any] = compose()["services"]
    return loaded


def _dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    result = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            keyword, _, rest = stripped.partition(" ")
            result.append((keyword.upper(), rest.strip()))
    return result


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {str(k): str(v) for k, v in env.items()}


# --- compose: services and start order ---------------------------------------------------------


def test_compose_has_the_whole_stack(services: dict[str, Any]) -> None:
    assert set(services) >= REQUIRED_SERVICES


def test_kafka_is_a_single_kraft_node_reachable_on_the_compose_network(
    services: dict[str, Any],
) -> None:
    kafka = services["kafka"]
    assert kafka["image"].startswith("apache/kafka:")
    env = _env(kafka)
    assert set(env["KAFKA_PROCESS_ROLES"].split(",")) == {"broker", "controller"}
    assert "zookeeper" not in json.dumps(kafka).lower()
    advertised = env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    # what the clients on the compose network are told to use
    for name in ("streameval", "simulator"):
        bootstrap = _env(services[name])["STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS"]
        assert any(listener.endswith("//" + bootstrap) for listener in advertised), name
    assert _env(services["kafka-init"])["BOOTSTRAP_SERVERS"] == bootstrap
    # every advertised listener is a listener with a protocol
    listener_names = {item.split("://")[0] for item in env["KAFKA_LISTENERS"].split(",")}
    protocols = dict(
        item.split(":") for item in env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"].split(",")
    )
    assert {item.split("://")[0] for item in advertised} <= listener_names <= set(protocols)


def test_kafka_users_wait_for_the_topics(services: dict[str, Any]) -> None:
    init = services["kafka-init"]
    assert init["image"] == services["kafka"]["image"]
    assert init["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert "healthcheck" in services["kafka"]
    for name in ("streameval", "simulator"):
        condition = services[name]["depends_on"]["kafka-init"]["condition"]
        assert condition == "service_completed_successfully", name


def test_topic_script_creates_the_configured_topics() -> None:
    compose_services = compose()["services"]
    script = CREATE_TOPICS.read_text(encoding="utf-8")
    created = set(re.findall(r"^create ([\w.-]+) ", script, flags=re.MULTILINE))
    assert created == DESIGN_TOPICS
    # impressions and clicks share one partition count (DESIGN §6); judgments are compacted
    assert re.search(r'^create search-impressions "\$PARTITIONS"$', script, re.MULTILINE)
    assert re.search(r'^create search-clicks "\$PARTITIONS"$', script, re.MULTILINE)
    assert re.search(r"^create search-judgments .*cleanup\.policy=compact", script, re.MULTILINE)
    # the daemon's configured topics are exactly those
    env = _env(compose_services["streameval"])
    configured = set(json.loads(env["STREAMEVAL_KAFKA__TOPICS"]))
    configured |= set(json.loads(env["STREAMEVAL_KAFKA__JUDGMENT_TOPICS"]))
    configured.add(env["STREAMEVAL_KAFKA__DLQ_TOPIC"])
    assert configured == DESIGN_TOPICS
    # the script is mounted where the entrypoint runs it
    init = compose_services["kafka-init"]
    entry = init["entrypoint"]
    assert host_path(init, entry[-1]) == CREATE_TOPICS


def test_topic_script_is_valid_bash() -> None:
    result = subprocess.run(
        ["bash", "-n", str(CREATE_TOPICS)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_streameval_config_keys_are_design_keys(services: dict[str, Any]) -> None:
    pattern = re.compile(r"STREAMEVAL_([A-Z]+)__([A-Z_]+)")
    checked = 0
    for name, service in services.items():
        for key, value in _env(service).items():
            if not key.startswith("STREAMEVAL_"):
                continue
            match = pattern.fullmatch(key)
            assert match, f"{name}: {key}"
            section, option = match.group(1).lower(), match.group(2).lower()
            assert option in DESIGN_CONFIG_KEYS[section], f"{name}: {key}"
            if value.startswith("["):
                json.loads(value)  # list settings are JSON, as pydantic-settings reads them
            checked += 1
    assert checked >= 6


# --- ports --------------------------------------------------------------------------------------


def test_metrics_port_is_9724_everywhere(services: dict[str, Any]) -> None:
    daemon = services["streameval"]
    assert int(_env(daemon)["STREAMEVAL_METRICS__PORT"]) == METRICS_PORT
    assert (METRICS_PORT, METRICS_PORT) in published_ports(daemon)
    instructions = _dockerfile_instructions()
    exposed = {
        int(p.split("/")[0]) for k, args in instructions if k == "EXPOSE" for p in args.split()
    }
    assert exposed == {METRICS_PORT}
    # Prometheus scrapes the compose service on that port
    config = load_yaml(PROMETHEUS_CONFIG)
    job = next(j for j in config["scrape_configs"] if j["job_name"] == "streameval")
    targets = [t for group in job["static_configs"] for t in group["targets"]]
    assert targets == [f"streameval:{METRICS_PORT}"]
    assert job.get("metrics_path", "/metrics") == "/metrics"


def test_published_ports_bind_to_localhost(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for entry in service.get("ports", []):
            assert str(entry).startswith("127.0.0.1:"), f"{name}: {entry}"


# --- Dockerfile ---------------------------------------------------------------------------------


def test_dockerfile_builds_a_non_root_image_with_a_healthcheck() -> None:
    instructions = _dockerfile_instructions()
    keywords = [k for k, _ in instructions]
    assert dict(instructions)["FROM"].split()[0] == "python:3.11-slim"
    user = [args for k, args in instructions if k == "USER"]
    assert user, "no USER"
    assert user[-1].split(":")[0] not in {"root", "0"}
    # the package is installed from the copied sources, and before USER (as root)
    assert any(k == "RUN" and "pip install" in args for k, args in instructions)
    assert keywords.index("USER") > max(i for i, k in enumerate(keywords) if k == "RUN")
    assert json.loads(dict(instructions)["ENTRYPOINT"]) == ["streameval"]
    assert json.loads(dict(instructions)["CMD"]) == ["run"]
    healthcheck = dict(instructions)["HEALTHCHECK"]
    assert "/healthz" in healthcheck
    assert f"'{METRICS_PORT}'" in healthcheck
    assert "STREAMEVAL_METRICS__PORT" in healthcheck


def test_dockerfile_copies_what_pip_install_needs_and_dockerignore_lets_it_through() -> None:
    ignore = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    sources = [
        source
        for keyword, args in _dockerfile_instructions()
        if keyword == "COPY"
        for source in shlex.split(args)[:-1]
        if not source.startswith("--")
    ]
    assert {"pyproject.toml", "streameval"} <= set(sources)
    for source in sources:
        assert source in allowed, f"{source} is excluded by .dockerignore"
        if not any(char in source for char in "*?["):
            assert (ROOT / source).exists(), f"COPY {source}: missing in the checkout"
    # the readme pyproject declares is copied too (a pattern: the build tolerates its absence)
    with (ROOT / "pyproject.toml").open("rb") as handle:
        readme = tomllib.load(handle)["project"]["readme"]
    assert any(fnmatch.fnmatch(readme, source) for source in sources), readme


def test_simulator_does_not_inherit_the_daemon_healthcheck(services: dict[str, Any]) -> None:
    assert services["simulator"]["healthcheck"] == {"disable": True}


# --- sub-commands -------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_compose_commands_are_design_commands(services: dict[str, Any]) -> None:
    assert command_list(services["streameval"])[0] == "run"
    assert command_list(services["simulator"])[0] == "simulate"
    for name in ("streameval", "simulator"):
        assert command_list(services[name])[0] in DESIGN_COMMANDS


@pytest.mark.parametrize("service", ["streameval", "simulator"])
def test_compose_commands_parse_with_the_cli(service: str) -> None:
    # The CLI is the authority once the commands exist: the sub-command is listed by
    # `streameval --help` and the whole command line (flags and values) parses.
    command = command_list(compose()["services"][service])
    parser = build_parser()
    assert command[0] in _subcommands(parser), (
        f"`streameval {command[0]}` is not a sub-command yet: {sorted(_subcommands(parser))}"
    )
    args = parser.parse_args(command)
    assert callable(args.handler)


# --- Prometheus and Grafana mounts and provisioning --------------------------------------------


def test_every_bind_mount_source_exists(services: dict[str, Any]) -> None:
    mounts = [(name, m) for name, s in services.items() for m in bind_mounts(s)]
    assert len(mounts) >= 4
    for name, mount in mounts:
        assert mount.source.exists(), f"{name}: {mount.source}"
        assert mount.source.is_relative_to(ROOT), f"{name}: {mount.source} outside the checkout"


def test_prometheus_container_reads_this_config(services: dict[str, Any]) -> None:
    prometheus = services["prometheus"]
    flag = next(a for a in command_list(prometheus) if a.startswith("--config.file="))
    assert host_path(prometheus, flag.split("=", 1)[1]) == PROMETHEUS_CONFIG
    assert host_path(prometheus, "/etc/prometheus/rules") == PROMETHEUS_DIR / "rules"


def test_grafana_provisioning_is_mounted_and_consistent(services: dict[str, Any]) -> None:
    grafana = services["grafana"]
    assert host_path(grafana, "/etc/grafana/provisioning/datasources/prometheus.yml") == DATASOURCES
    providers = load_yaml(DASHBOARD_PROVIDERS)["providers"]
    assert len(providers) == 1
    dashboards_dir = host_path(grafana, providers[0]["options"]["path"])
    assert dashboards_dir == DASHBOARD_JSON.parent
    env = _env(grafana)
    assert host_path(grafana, env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]) == DASHBOARD_JSON
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "true"
    assert env["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"
    assert "${GRAFANA_ADMIN_PASSWORD" in env["GF_SECURITY_ADMIN_PASSWORD"]


def test_datasource_points_at_the_prometheus_service(services: dict[str, Any]) -> None:
    (source,) = load_yaml(DATASOURCES)["datasources"]
    assert source["type"] == "prometheus"
    host, port = source["url"].removeprefix("http://").split(":")
    assert host in services
    assert int(port) == 9090
    scrape = load_yaml(PROMETHEUS_CONFIG)["global"]["scrape_interval"]
    assert source["jsonData"]["timeInterval"] == scrape


def test_dashboard_reads_the_datasource_variable_and_names_no_uid() -> None:
    # The dashboard imports into any Grafana: every panel, query and query variable reads the
    # `datasource` variable; no datasource uid (compose's provisioned one included) is in it.
    (source,) = load_yaml(DATASOURCES)["datasources"]
    board = dashboard()
    refs = [p["datasource"] for p in panels(board) if p["type"] != "row"]
    refs += [t["datasource"] for p in panels(board) for t in p.get("targets", [])]
    variables = board["templating"]["list"]
    refs += [v["datasource"] for v in variables if v["type"] == "query"]
    assert len(refs) > 30
    for ref in refs:
        assert ref == {"type": "prometheus", "uid": "${datasource}"}
    assert source["uid"] not in json.dumps(board)
    # the variable offers Prometheus datasources, and defaults to the one the UI import picks
    (ds_variable,) = [v for v in variables if v["type"] == "datasource"]
    assert ds_variable["name"] == "datasource"
    assert ds_variable["query"] == "prometheus"
    (ds_input,) = board["__inputs"]
    assert (ds_input["type"], ds_input["pluginId"]) == ("datasource", "prometheus")
    placeholder = "${" + ds_input["name"] + "}"
    assert ds_variable["current"]["value"] == placeholder
    # it is the only place the placeholder appears: after a UI import (which replaces it) or
    # without one (file provisioning: an unknown value falls back to a Prometheus datasource),
    # the panels still read the variable
    assert json.dumps(board).count(placeholder) == 2  # current's text and value
    # compose provisions exactly one Prometheus datasource, the default: the fallback is it
    assert source["type"] == "prometheus"
    assert source["isDefault"] is True


def _generator(monkeypatch: pytest.MonkeyPatch) -> Any:
    """deploy/grafana/dashboard.py, imported (it is a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("streameval_dashboard", DASHBOARD_SOURCE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_dashboard_json_is_the_generator_output(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DASHBOARD_JSON.read_text(encoding="utf-8") == _generator(monkeypatch).render(), (
        "regenerate: python deploy/grafana/dashboard.py > deploy/grafana/dashboards/streameval.json"
    )


def test_a_row_is_one_function_added_to_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # How the detection and interleaving rows are meant to be added: a function returning a
    # Section, appended to ROWS; ids and positions of everything above stay as they are.
    gen = _generator(monkeypatch)

    def extra_row() -> Any:
        return gen.Section(
            "Extra",
            (
                gen.timeseries_panel("left", gen.query("streameval_open_lists", "x"), width=12),
                gen.stat_panel("right", gen.query("streameval_judgments", "y"), width=12),
            ),
        )

    def built(rows: Any) -> list[dict[str, Any]]:
        board = json.loads(json.dumps(gen.dashboard(rows).build(), cls=gen.JSONEncoder))
        return list(panels(board))

    before = built(gen.ROWS)
    after = built((*gen.ROWS, extra_row))
    assert after[: len(before)] == before
    row, left, right = after[len(before) :]
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in before)
    assert (row["type"], row["title"], row["gridPos"]) == (
        "row",
        "Extra",
        {"h": 1, "w": 24, "x": 0, "y": bottom},
    )
    assert (left["gridPos"]["x"], left["gridPos"]["y"]) == (0, bottom + 1)
    assert (right["gridPos"]["x"], right["gridPos"]["y"]) == (12, bottom + 1)
    last_id = max(p["id"] for p in before)
    assert [row["id"], left["id"], right["id"]] == [last_id + 1, last_id + 2, last_id + 3]
    assert left["targets"][0]["datasource"] == right["datasource"] == before[1]["datasource"]


def test_the_dashboard_sdk_is_the_release_for_the_grafana_image(
    services: dict[str, Any],
) -> None:
    # grafana-foundation-sdk versions are "<build epoch>!<Grafana version>": the one pinned in
    # the test extra must be the Grafana that docker-compose.yml runs.
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    test_extra = project["optional-dependencies"]["test"]
    [pin] = [d for d in test_extra if d.startswith("grafana-foundation-sdk")]
    sdk_grafana = re.fullmatch(r"grafana-foundation-sdk==\d+!(\d+\.\d+\.\d+)", pin)
    assert sdk_grafana, pin
    image = services["grafana"]["image"]
    assert image == f"grafana/grafana:{sdk_grafana.group(1)}", (image, pin)
    assert not any(d.startswith("grafana") for d in project["dependencies"])


def test_dashboard_layout_fits_the_grid() -> None:
    board = dashboard()
    ids = [p["id"] for p in panels(board)]
    assert len(ids) == len(set(ids))
    cells: set[tuple[int, int]] = set()
    for panel in panels(board):
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps another panel"
                cells.add((x, y))
