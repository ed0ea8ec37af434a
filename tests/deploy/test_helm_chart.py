"""The Helm chart, rendered by a real `helm` (scripts/install-helm), checked as the compose files
are: lint, the Kubernetes API schemas (kubernetes-validate) and the Prometheus Operator's CRD
schemas (jsonschema), and the contracts between the objects and the daemon (probes, port,
PodMonitor selection, the rules and the dashboard from their one source, secrets, the rendered
streameval.toml through the daemon's own settings loader)."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import tarfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from prometheus_client import CollectorRegistry

from streameval.config import KafkaSettings, MetricsSettings, Settings, load_settings
from streameval.export import names
from streameval.export.server import MetricsServer
from tests.deploy.deployfiles import (
    DASHBOARD_JSON,
    DOCKERFILE,
    METRICS_PORT,
    RULE_FILES,
    dashboard_queries,
    metric_names,
    promtool_or_skip,
    recorded_names,
    rule_groups,
)
from tests.deploy.helmchart import (
    CHART,
    CHART_CI_VALUES,
    NAMESPACE,
    RELEASE,
    Rendered,
    container,
    crd_validator,
    helm,
    render,
    template_args,
)

CI_VALUES = {path.name.removesuffix("-values.yaml"): path for path in CHART_CI_VALUES}
DEFAULT = CI_VALUES["default"]
SECURE = CI_VALUES["secure"]
EXISTING = CI_VALUES["existing-secrets"]
CRD_KINDS = frozenset({"PodMonitor", "PrometheusRule"})
#: the oldest Kubernetes the chart supports (policy/v1 PDB, seccompProfile) and the newest the
#: installed kubernetes-validate bundles
KUBERNETES_VERSIONS = ("1.25.0", kubernetes_validate.latest_version())
FULLNAME = f"{RELEASE}"  # the release name contains the chart name: no "-streameval" suffix


@pytest.fixture(params=sorted(CI_VALUES), ids=sorted(CI_VALUES))
def values(request: pytest.FixtureRequest) -> Path:
    return CI_VALUES[request.param]


def test_ci_values_files_cover_the_cases() -> None:
    assert set(CI_VALUES) == {"default", "secure", "existing-secrets"}


# --- helm lint and template ---------------------------------------------------------------------


def test_helm_lint_strict(values: Path) -> None:
    result = helm("lint", "--strict", CHART, "-f", values)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 chart(s) linted, 0 chart(s) failed" in result.stdout


def test_lint_catches_a_broken_chart(tmp_path: Path) -> None:
    # not a vacuous pass: a template with a syntax error fails lint
    broken = tmp_path / "streameval"
    subprocess.run(["cp", "-rL", str(CHART), str(broken)], check=True)
    (broken / "templates" / "broken.yaml").write_text("{{ if }}\n")
    result = helm("lint", "--strict", broken, "-f", DEFAULT)
    assert result.returncode != 0


def test_render_without_a_bootstrap_address_fails_naming_the_value() -> None:
    result = helm(*template_args())
    assert result.returncode != 0
    (line,) = [ln for ln in result.stderr.splitlines() if ln.startswith("Error:")]
    assert "config.kafka.bootstrap_servers is required" in line
    assert "--set config.kafka.bootstrap_servers=" in line


@pytest.mark.parametrize(
    ("key", "fix"),
    [
        ("config.kafka.sasl_password", "kafkaSasl"),
        ("config.kafka.ssl_password", "kafkaTls"),
        ("config.metrics.basic_auth_password", "metricsAuth"),
        ("config.kafka.group_instance_id", "staticMembership"),
    ],
)
def test_secrets_and_per_pod_keys_are_refused_in_the_config(key: str, fix: str) -> None:
    result = helm(*template_args([DEFAULT], {key: "x"}))
    assert result.returncode != 0
    assert key in result.stderr and fix in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("replicacount", "3", "additional properties 'replicacount' not allowed"),
        ("config.evaluaton.ks", "1", "additional properties 'evaluaton' not allowed"),
        ("config.metrics.port", "nine", "/config/metrics/port"),
        ("podMonitor.intervall", "15s", "additional properties 'intervall' not allowed"),
    ],
)
def test_values_schema_rejects_a_misspelt_or_mistyped_value(
    key: str, value: str, message: str
) -> None:
    # values.schema.json: a typo in a value would otherwise be ignored without a word
    result = helm(*template_args([DEFAULT], {key: value}))
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_sasl_without_a_sasl_protocol_is_refused() -> None:
    result = helm(*template_args([DEFAULT], {"kafkaSasl.password": "x"}))
    assert result.returncode != 0
    assert "config.kafka.security_protocol" in result.stderr
    assert "SASL_SSL" in result.stderr


def test_metrics_tls_needs_the_podmonitor_tls_config() -> None:
    sets = {"metricsTls.enabled": "true", "metricsTls.existingSecret": "cert"}
    result = helm(*template_args([DEFAULT], sets))
    assert result.returncode != 0
    assert "podMonitor.tlsConfig" in result.stderr


def test_every_object_is_installed_in_the_release() -> None:
    rendered = render([SECURE])
    assert rendered.kinds() == {
        "ServiceAccount",
        "Secret",
        "ConfigMap",
        "Service",
        "StatefulSet",
        "PodDisruptionBudget",
        "PodMonitor",
        "PrometheusRule",
    }
    assert {o["metadata"]["name"] for o in rendered.of_kind("ConfigMap")} == {
        FULLNAME,
        f"{FULLNAME}-dashboard",
    }


# --- schemas ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_manifests_validate_against_the_kubernetes_api_schemas(values: Path, version: str) -> None:
    rendered = render([values])
    checked = 0
    for obj in rendered.objects:
        if obj["kind"] in CRD_KINDS:
            continue
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 5  # ServiceAccount, ConfigMap, Service, StatefulSet, PDB (+ Secrets)


def test_kubernetes_validation_rejects_a_misspelt_field() -> None:
    statefulset = json.loads(json.dumps(render([DEFAULT]).one("StatefulSet")))
    statefulset["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(statefulset, KUBERNETES_VERSIONS[-1], strict=True)


def test_operator_objects_validate_against_the_prometheus_operator_crds(values: Path) -> None:
    rendered = render([values])
    found = {o["kind"] for o in rendered.objects} & CRD_KINDS
    assert found == CRD_KINDS
    for obj in rendered.objects:
        if obj["kind"] in CRD_KINDS:
            assert obj["apiVersion"] == "monitoring.coreos.com/v1"
            crd_validator(obj["kind"]).validate(obj)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("spec", "podMetricsEndpoints", 0, "scrapeInterval"), "15s"),  # misspelt: interval
        (("spec", "podMetricsEndpoints", 0, "relabelings", 0, "action"), "rename"),
        (("spec", "selector", "matchLabels"), ["not", "a", "map"]),
    ],
)
def test_crd_validation_rejects_a_broken_podmonitor(path: tuple[Any, ...], value: Any) -> None:
    monitor = json.loads(json.dumps(render([DEFAULT]).one("PodMonitor")))
    node = monitor
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        crd_validator("PodMonitor").validate(monitor)


# --- the daemon's port and probes ---------------------------------------------------------------


def _toml(rendered: Rendered) -> str:
    text: str = rendered.one("ConfigMap", FULLNAME)["data"]["streameval.toml"]
    return text


def _probe_paths(rendered: Rendered) -> dict[str, tuple[str, str, str]]:
    daemon = container(rendered)
    return {
        probe: (
            daemon[probe]["httpGet"]["path"],
            daemon[probe]["httpGet"]["port"],
            daemon[probe]["httpGet"]["scheme"],
        )
        for probe in ("startupProbe", "livenessProbe", "readinessProbe")
    }


def test_the_port_is_metrics_port_everywhere(tmp_path: Path) -> None:
    for sets, port in (({}, METRICS_PORT), ({"config.metrics.port": "9900"}, 9900)):
        rendered = render([DEFAULT], sets)
        assert load_settings_from(rendered, tmp_path).metrics.port == port
        daemon = container(rendered)
        assert daemon["ports"] == [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
        # probes, the PodMonitor and the headless Service use the port by its name
        assert {p[1] for p in _probe_paths(rendered).values()} == {"metrics"}
        (endpoint,) = rendered.one("PodMonitor")["spec"]["podMetricsEndpoints"]
        assert endpoint["port"] == "metrics"
        (service_port,) = rendered.one("Service")["spec"]["ports"]
        assert (service_port["port"], service_port["targetPort"]) == (port, "metrics")
    assert MetricsSettings().port == METRICS_PORT


def test_probes_and_scrape_work_against_the_daemons_server() -> None:
    # The daemon's own HTTP server, with the basic auth the chart's Secret gives it: every probe
    # path answers without credentials (the kubelet has none), /metrics only with them (the
    # PodMonitor's basicAuth from the same Secret).
    rendered = render([SECURE])
    secret = _decoded(rendered.one("Secret", f"{FULLNAME}-metrics-auth"))
    (endpoint,) = rendered.one("PodMonitor")["spec"]["podMetricsEndpoints"]
    auth = endpoint["basicAuth"]
    user = secret[auth["username"]["key"]]
    password = secret[auth["password"]["key"]]
    probes = _probe_paths(rendered)
    assert {p[0] for p in probes.values()} == {"/healthz", "/readyz"}
    assert probes["readinessProbe"][0] == "/readyz"
    assert probes["livenessProbe"][0] == "/healthz"
    server = MetricsServer(
        CollectorRegistry(),
        host="127.0.0.1",
        port=0,
        ready=lambda: True,
        live=lambda: True,
        basic_auth=(user, password),
    )
    with server:
        base = f"http://127.0.0.1:{server.port}"
        for path, _, _ in probes.values():
            with urllib.request.urlopen(base + path, timeout=5) as response:
                assert response.status == 200, path
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + endpoint["path"], timeout=5)
        assert refused.value.code == 401
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        request = urllib.request.Request(
            base + endpoint["path"], headers={"Authorization": f"Basic {token}"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            assert response.status == 200
    # TLS on /metrics: the probes and the scrape switch to HTTPS together
    assert {p[2] for p in probes.values()} == {"HTTPS"}
    assert endpoint["scheme"] == "https"
    assert {p[2] for p in _probe_paths(render([DEFAULT])).values()} == {"HTTP"}


def test_probe_timings_fit_the_restart() -> None:
    daemon = container(render([DEFAULT]))
    startup, liveness, readiness = (
        daemon[p] for p in ("startupProbe", "livenessProbe", "readinessProbe")
    )
    # the start gets a minute before liveness counts; liveness never restarts a pod in the
    # ~30 s rebuild (its /healthz is 200 then) and reacts within 30 s to a stalled loop
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 60
    assert liveness["periodSeconds"] * liveness["failureThreshold"] <= 60
    assert liveness["timeoutSeconds"] < liveness["periodSeconds"]
    # readiness sees the end of a ~30 s rebuild within 5 s
    assert readiness["periodSeconds"] <= 5
    assert "initialDelaySeconds" not in readiness


# --- StatefulSet, static membership, security ---------------------------------------------------


def _env(rendered: Rendered) -> dict[str, dict[str, Any]]:
    return {item["name"]: item for item in container(rendered).get("env", [])}


def test_statefulset_runs_the_daemon_with_the_rendered_config() -> None:
    rendered = render([SECURE])
    statefulset = rendered.one("StatefulSet")
    spec = statefulset["spec"]
    assert spec["replicas"] == 3
    assert spec["serviceName"] == rendered.one("Service")["metadata"]["name"]
    assert rendered.one("Service")["spec"]["clusterIP"] == "None"
    assert spec["podManagementPolicy"] == "Parallel"
    daemon = container(rendered)
    assert daemon["image"] == "registry.example.com/search/streameval:0.1.0"
    assert daemon["args"] == ["run", "--config", "/etc/streameval/streameval.toml"]
    config_mount = next(m for m in daemon["volumeMounts"] if m["name"] == "config")
    assert config_mount["mountPath"] + "" == daemon["args"][-1]
    volume = next(v for v in spec["template"]["spec"]["volumes"] if v["name"] == "config")
    assert volume["configMap"]["name"] == FULLNAME
    assert config_mount["subPath"] in rendered.one("ConfigMap", FULLNAME)["data"]
    # the default image tag is the chart's appVersion
    assert container(render([DEFAULT]))["image"] == "streameval:" + _chart()["appVersion"]


def test_static_membership_takes_the_pod_name() -> None:
    env = _env(render([DEFAULT]))
    assert env["STREAMEVAL_KAFKA__GROUP_INSTANCE_ID"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.name"}
    }
    assert "STREAMEVAL_KAFKA__GROUP_INSTANCE_ID" not in _env(render([EXISTING]))


def test_static_membership_variable_is_a_config_key() -> None:
    assert "group_instance_id" in KafkaSettings.model_fields


def test_the_pod_runs_non_root_on_a_read_only_root_filesystem() -> None:
    rendered = render([DEFAULT])
    pod = rendered.one("StatefulSet")["spec"]["template"]["spec"]
    daemon = container(rendered)
    assert pod["securityContext"]["runAsNonRoot"] is True
    # the image's own user (Dockerfile USER), so files it owns stay readable
    user = next(
        line.split()[1]
        for line in DOCKERFILE.read_text(encoding="utf-8").splitlines()
        if line.startswith("USER ")
    )
    assert f"{pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}" == user
    assert daemon["securityContext"]["readOnlyRootFilesystem"] is True
    assert daemon["securityContext"]["allowPrivilegeEscalation"] is False
    assert daemon["securityContext"]["capabilities"]["drop"] == ["ALL"]
    # the one writable place: /tmp, an emptyDir (the image's WORKDIR)
    tmp = next(m for m in daemon["volumeMounts"] if m["mountPath"] == "/tmp")
    volume = next(v for v in pod["volumes"] if v["name"] == tmp["name"])
    assert "emptyDir" in volume
    assert all(m.get("readOnly") for m in daemon["volumeMounts"] if m["mountPath"] != "/tmp")
    assert pod["automountServiceAccountToken"] is False


def test_pdb_covers_the_pods_and_lets_a_drain_through() -> None:
    rendered = render([SECURE])
    pdb = rendered.one("PodDisruptionBudget")
    pod_labels = rendered.one("StatefulSet")["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    # maxUnavailable, not minAvailable: a single replica can still be drained
    assert pdb["spec"]["maxUnavailable"] == 1
    assert "minAvailable" not in pdb["spec"]


# --- PodMonitor ---------------------------------------------------------------------------------


def test_podmonitor_scrapes_every_pod_of_the_statefulset() -> None:
    rendered = render([SECURE])
    monitor = rendered.one("PodMonitor")
    statefulset = rendered.one("StatefulSet")
    pod_labels = statefulset["spec"]["template"]["metadata"]["labels"]
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= pod_labels.items()
    assert selector == statefulset["spec"]["selector"]["matchLabels"]
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in container(rendered)["ports"]}
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    # the scrape interval the alert rules' `for:` assume (<= 30 s)
    assert int(endpoint["interval"].removesuffix("s")) <= 30
    # pods, not a Service: no ServiceMonitor (one pod per scrape would skew the pooled NDCG)
    assert "ServiceMonitor" not in rendered.kinds()


def test_podmonitor_makes_instance_the_one_per_pod_label() -> None:
    # The alert rules aggregate `without (instance)`: any other per-pod label would page once
    # per pod. So the PodMonitor names the instance after the pod and drops the operator's
    # per-pod target labels.
    (endpoint,) = render([DEFAULT]).one("PodMonitor")["spec"]["podMetricsEndpoints"]
    relabel = endpoint["relabelings"]
    assert {
        "sourceLabels": ["__meta_kubernetes_pod_name"],
        "targetLabel": "instance",
        "action": "replace",
    } in relabel
    (drop,) = [r for r in relabel if r["action"] == "labeldrop"]
    assert set(drop["regex"].split("|")) == {"pod", "container", "endpoint"}
    without = set()
    for path in RULE_FILES:
        text = path.read_text(encoding="utf-8")
        without |= {part.split(")")[0] for part in text.split("without (")[1:]}
    assert without == {"instance"}


# --- PrometheusRule and dashboard from their one source -----------------------------------------


def _by_name(groups: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    named = {g["name"]: g for g in groups}
    assert len(named) == len(groups), "duplicate group names"
    return named


def test_prometheusrule_groups_are_the_rule_files() -> None:
    groups = render([DEFAULT]).one("PrometheusRule")["spec"]["groups"]
    assert _by_name(groups) == _by_name(rule_groups())
    assert sum(len(g["rules"]) for g in groups) >= 40


def test_prometheusrule_groups_pass_promtool(tmp_path: Path) -> None:
    groups = render([DEFAULT]).one("PrometheusRule")["spec"]["groups"]
    path = tmp_path / "prometheusrule.yml"
    path.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False), encoding="utf-8")
    result = subprocess.run(
        [promtool_or_skip(), "check", "rules", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rules = sum(len(g["rules"]) for g in groups)
    assert f"{rules} rules found" in result.stdout


def test_chart_files_link_to_the_one_source() -> None:
    for link, target in (
        (CHART / "files" / "rules", RULE_FILES[0].parent),
        (CHART / "files" / "dashboards", DASHBOARD_JSON.parent),
    ):
        assert link.is_symlink(), link
        assert link.resolve() == target.resolve()


def test_helm_package_carries_the_rules_and_the_dashboard(tmp_path: Path) -> None:
    # Helm follows the links, and the packaged chart holds their contents: a chart pushed to a
    # registry needs no checkout.
    result = helm("package", CHART, "--destination", tmp_path)
    assert result.returncode == 0, result.stderr
    (archive,) = tmp_path.glob("streameval-*.tgz")
    with tarfile.open(archive) as tar:
        for path in (*RULE_FILES, DASHBOARD_JSON):
            member = f"streameval/files/{path.parent.name}/{path.name}"
            extracted = tar.extractfile(member)
            assert extracted is not None, member
            assert extracted.read() == path.read_bytes(), member


def test_dashboard_configmap_is_the_dashboard_for_the_sidecar() -> None:
    rendered = render([SECURE])
    configmap = rendered.one("ConfigMap", f"{FULLNAME}-dashboard")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["annotations"] == {"grafana_folder": "Search"}
    board = json.loads(configmap["data"]["streameval.json"])
    committed = json.loads(DASHBOARD_JSON.read_text(encoding="utf-8"))
    # the committed dashboard, with the import placeholder set to values' datasource uid
    (ds_input,) = committed["__inputs"]
    placeholder = "${" + ds_input["name"] + "}"
    expected = json.loads(
        DASHBOARD_JSON.read_text(encoding="utf-8").replace(placeholder, "prometheus")
    )
    assert board == expected
    assert board != committed
    (variable,) = [v for v in board["templating"]["list"] if v["type"] == "datasource"]
    assert variable["current"]["value"] == "prometheus"
    # every metric its queries use is one the daemon exports or a recording rule records
    used = frozenset().union(*(metric_names(q.expr) for q in dashboard_queries(board)))
    assert used
    assert not used - (names.ALL | recorded_names())
    # a ConfigMap holds at most 1 MiB
    assert len(configmap["data"]["streameval.json"].encode()) < 1_000_000


def test_only_one_release_needs_the_rules_and_the_dashboard() -> None:
    rendered = render(
        [DEFAULT], {"prometheusRule.enabled": "false", "grafanaDashboard.enabled": "false"}
    )
    assert "PrometheusRule" not in rendered.kinds()
    assert {o["metadata"]["name"] for o in rendered.of_kind("ConfigMap")} == {FULLNAME}


# --- secrets and the rendered streameval.toml ---------------------------------------------------


def _decoded(secret: dict[str, Any]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in secret.get("data", {}).items()}


#: every secret of ci/secure-values.yaml (the client key's PEM body too)
SECRET_VALUES = (
    "not-a-real-password-sasl",
    "not-a-real-password-metrics",
    "not-a-real-password-key",
    "bm90IGEgcmVhbCBrZXk=",
)


def test_secrets_never_land_in_a_configmap() -> None:
    rendered = render([SECURE])
    configmaps = json.dumps(rendered.of_kind("ConfigMap"))
    secrets = "\n".join(v for s in rendered.of_kind("Secret") for v in _decoded(s).values())
    for value in SECRET_VALUES:
        assert value not in configmaps, value
        assert value in secrets, value  # the check above is not vacuous: the value is rendered
    # nor in the StatefulSet as a plain env value: each secret variable is a secretKeyRef
    for name, item in _env(rendered).items():
        if "PASSWORD" in name or "USERNAME" in name:
            assert set(item) == {"name", "valueFrom"}, name
            assert "secretKeyRef" in item["valueFrom"], name
    assert {
        "STREAMEVAL_KAFKA__SASL_PASSWORD",
        "STREAMEVAL_KAFKA__SSL_PASSWORD",
        "STREAMEVAL_METRICS__BASIC_AUTH_USERNAME",
        "STREAMEVAL_METRICS__BASIC_AUTH_PASSWORD",
    } <= set(_env(rendered))


def test_existing_secrets_are_used_and_none_created() -> None:
    rendered = render([EXISTING])
    assert "Secret" not in rendered.kinds()
    env = _env(rendered)
    assert env["STREAMEVAL_KAFKA__SASL_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "kafka-user-streameval",
        "key": "sasl.password",
    }
    pod = rendered.one("StatefulSet")["spec"]["template"]["spec"]
    tls = next(v for v in pod["volumes"] if v["name"] == "kafka-tls")
    assert tls["secret"]["secretName"] == "kafka-cluster-ca"
    (endpoint,) = rendered.one("PodMonitor")["spec"]["podMetricsEndpoints"]
    assert endpoint["basicAuth"]["password"]["name"] == "streameval-scrape-auth"


def load_settings_from(rendered: Rendered, directory: Path) -> Settings:
    """The daemon's settings from the rendered streameval.toml and the current environment."""
    path = directory / "streameval.toml"
    path.write_text(_toml(rendered), encoding="utf-8")
    return load_settings(path)


def _resolve_env(rendered: Rendered, item: dict[str, Any]) -> str:
    if "value" in item:
        return str(item["value"])
    source = item["valueFrom"]
    if "fieldRef" in source:
        assert source["fieldRef"]["fieldPath"] == "metadata.name"
        return f"{FULLNAME}-0"
    ref = source["secretKeyRef"]
    created = [s for s in rendered.of_kind("Secret") if s["metadata"]["name"] == ref["name"]]
    if created:
        return _decoded(created[0])[ref["key"]]
    return f"from-existing-secret-{ref['name']}-{ref['key']}"


def test_rendered_config_loads_with_the_daemons_settings_loader(
    values: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = render([values])
    for name, item in _env(rendered).items():
        monkeypatch.setenv(name, _resolve_env(rendered, item))
    settings = load_settings_from(rendered, tmp_path)
    chart_values = yaml.safe_load(values.read_text(encoding="utf-8"))
    kafka = chart_values["config"]["kafka"]
    assert settings.kafka.bootstrap_servers == kafka["bootstrap_servers"]
    assert settings.kafka.security_protocol == kafka.get("security_protocol", "PLAINTEXT")
    assert settings.metrics.port == METRICS_PORT
    if chart_values.get("staticMembership", True):
        assert settings.kafka.group_instance_id == f"{FULLNAME}-0"
    sasl = _env(rendered).get("STREAMEVAL_KAFKA__SASL_PASSWORD")
    if sasl is not None:
        assert settings.kafka.sasl_password is not None
        assert settings.kafka.sasl_password.get_secret_value() == _resolve_env(rendered, sasl)


def test_secure_config_points_at_mounted_files_and_keeps_its_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = render([SECURE])
    for name, item in _env(rendered).items():
        if name != "STREAMEVAL_KAFKA__GROUP_INSTANCE_ID":
            monkeypatch.setenv(name, _resolve_env(rendered, item))
    settings = load_settings_from(rendered, tmp_path)
    # the evaluation keys went through Helm's numbers unchanged (integers stay integers)
    assert settings.evaluation.ks == (1, 5, 10)
    assert settings.evaluation.max_open_lists == 500_000
    assert "max_open_lists = 500000\n" in _toml(rendered)
    assert settings.evaluation.discount_base == 2.0
    assert settings.detection.min_relative_drop == 0.03
    assert settings.metrics.basic_auth_username == "prometheus"
    assert settings.kafka.ssl_password is not None
    # every file the config names is in a mounted Secret that has that key
    daemon = container(rendered)
    pod = rendered.one("StatefulSet")["spec"]["template"]["spec"]
    files = [
        settings.kafka.ssl_cafile,
        settings.kafka.ssl_certfile,
        settings.kafka.ssl_keyfile,
        settings.metrics.tls_certfile,
        settings.metrics.tls_keyfile,
    ]
    for file in files:
        assert file is not None
        directory, key = file.rsplit("/", 1)
        mount = next(m for m in daemon["volumeMounts"] if m["mountPath"] == directory)
        volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
        secret_name = volume["secret"]["secretName"]
        created = [s for s in rendered.of_kind("Secret") if s["metadata"]["name"] == secret_name]
        if created:
            assert key in created[0]["data"], file
        else:
            assert secret_name == "streameval-metrics-cert"  # existing: a kubernetes.io/tls
            assert key in {"tls.crt", "tls.key"}


# --- chart metadata -----------------------------------------------------------------------------


def _chart() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    return loaded


def test_chart_app_version_is_the_package_version() -> None:
    import streameval

    assert _chart()["appVersion"] == streameval.__version__
    assert _chart()["apiVersion"] == "v2"


def test_rendered_manifests_are_plain_yaml() -> None:
    # one document per object, no stray template output
    result = helm(*template_args([SECURE]))
    docs = [d for d in yaml.safe_load_all(io.StringIO(result.stdout)) if d is not None]
    assert all(isinstance(d, dict) and "kind" in d for d in docs)
    assert len(docs) == len(render([SECURE]).objects)


def test_a_checkout_without_symbolic_links_stops_the_render_saying_so(tmp_path: Path) -> None:
    # where git writes a link as a text file holding its target (core.symlinks=false)
    copied = tmp_path / "streameval"
    subprocess.run(["cp", "-r", str(CHART), str(copied)], check=True)
    for name in ("rules", "dashboards"):
        link = copied / "files" / name
        target = (CHART / "files" / name).readlink()
        link.unlink()
        link.write_text(str(target), encoding="utf-8")
    result = helm("template", RELEASE, copied, "-f", DEFAULT)
    assert result.returncode != 0
    assert "files/rules" in result.stderr
    assert "link to deploy/prometheus/rules" in result.stderr
    sets = ("--set", "prometheusRule.enabled=false")
    result = helm("template", RELEASE, copied, "-f", DEFAULT, *sets)
    assert result.returncode != 0
    assert "files/dashboards must link to deploy/grafana/dashboards" in result.stderr
