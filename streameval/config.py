"""Configuration: one frozen pydantic-settings model, validated at start, passed down.

Sources, highest priority first: ``STREAMEVAL_…`` environment variables (nested keys with ``__``,
e.g. ``STREAMEVAL_EVALUATION__KS='[1, 5]'``, or for a list of plain values ``1,5``: see
:mod:`streameval.config_env`, which also warns of a variable that sets nothing), the TOML file
given with ``--config``, the defaults below (DESIGN §7). A wrong value fails at start with a
:class:`~streameval.errors.ConfigError` whose message names the key, e.g. ``evaluation.ks: …``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from streameval.config_env import ListFriendlyEnvSource, check_environment, did_you_mean
from streameval.durations import format_duration, parse_duration
from streameval.errors import ConfigError

#: A duration in milliseconds, written in config as "10s", "5m", "1h" (or integer milliseconds).
Duration = Annotated[
    int, BeforeValidator(parse_duration), PlainSerializer(format_duration, return_type=str)
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
#: the characters Kafka allows in a ``group.instance.id``
_INSTANCE_ID = re.compile(r"[A-Za-z0-9._-]+")


class KafkaSettings(BaseModel):
    """The Kafka cluster, the topics read and written, and the consumer group (DESIGN §6)."""

    model_config = _FROZEN

    #: the brokers to bootstrap from, comma-separated "host:port" pairs
    bootstrap_servers: str = "localhost:9092"
    #: the consumer group of ``topics``: the instances of one deployment share it and split the
    #: partitions; also the prefix of the group's keys in ``state_topic``
    group_id: str = Field("streameval", min_length=1)
    #: impressions and clicks (native or UBI); co-partitioned by request_id
    topics: tuple[str, ...] = ("search-impressions", "search-clicks")
    #: graded judgments, keyed by query_id + doc_id (+ judge) and compacted; every instance reads
    #: all of them, to their end before any list is finalized
    judgment_topics: tuple[str, ...] = ("search-judgments",)
    #: "" turns the dead-letter topic off
    dlq_topic: str = "streameval-dlq"
    #: the window state changelog (DESIGN §6): a compacted topic of finalized buckets, so that a
    #: restart or rebalance loads them instead of re-reading the longest window; "" turns it off
    state_topic: str = "streameval-state"
    #: where a group without committed offsets starts (extension)
    auto_offset_reset: Literal["earliest", "latest"] = "earliest"
    #: the client id the Kafka clients give the brokers (extension)
    client_id: str = "streameval"
    #: how often offsets (with their checkpoint) are committed (extension)
    commit_interval: Duration = 5_000
    #: a member silent for this long leaves the group and its partitions move (extension)
    session_timeout: Duration = 45_000
    #: at start, when no broker of ``bootstrap_servers`` answers: false (the default) fails
    #: within seconds saying so; true retries with backoff (1 s doubling to 30 s) while the
    #: process lives, serving /healthz meanwhile (/readyz stays 503)
    connect_retry: bool = False
    #: static group membership (KIP-345; extension): this instance's own, stable id in the
    #: group, e.g. a StatefulSet pod's name (``$HOSTNAME``). A member that comes back with its
    #: id within ``session_timeout`` gets its partitions back at once, without a rebalance (a
    #: crashed instance is not blind for the session timeout); but a static member does not
    #: leave the group when it stops, so the partitions of one that does not come back wait
    #: ``session_timeout`` before they move. Unset: dynamic membership. Each instance needs
    #: its own id: two with the same one fence each other.
    group_instance_id: str | None = None
    #: the client that reads ``topics`` in the consumer group (extension): "kafka-python" (the
    #: default) or "confluent-kafka" (librdkafka; the optional extra ``streameval[confluent]``;
    #: co-partitions with librdkafka's range assignor, so the topics need equal partition counts,
    #: and every member of a group must use the same client). Judgments and the dead-letter
    #: topic always use kafka-python.
    consumer: Literal["kafka-python", "confluent-kafka"] = Field(
        "kafka-python",
        description="client of the consumer group: kafka-python (default) or confluent-kafka "
        "(pip install 'streameval[confluent]'; topics with equal partition counts; one client "
        "per group)",
    )
    # security settings, passed through to the Kafka client
    #: how the clients talk to the brokers: TLS ("SSL", "SASL_SSL") and SASL authentication
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    #: the SASL mechanism: "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", ...
    sasl_mechanism: str | None = None
    #: the SASL user name
    sasl_username: str | None = None
    #: the SASL password (a secret: never printed or logged)
    sasl_password: SecretStr | None = None
    #: the CA certificate (PEM file) that signed the brokers' certificates
    ssl_cafile: str | None = None
    #: the client certificate (PEM file), for brokers that authenticate clients by TLS
    ssl_certfile: str | None = None
    #: the client certificate's private key (PEM file)
    ssl_keyfile: str | None = None
    #: the password of ``ssl_keyfile`` (a secret)
    ssl_password: SecretStr | None = None
    #: check that a broker's certificate names the host connected to
    ssl_check_hostname: bool = True

    @field_validator("consumer")
    @classmethod
    def _consumer_installed(cls, value: str) -> str:
        if value == "confluent-kafka" and importlib.util.find_spec("confluent_kafka") is None:
            raise ValueError(
                "confluent-kafka is not installed: pip install 'streameval[confluent]'"
            )
        return value

    @field_validator("group_instance_id")
    @classmethod
    def _instance_id(cls, value: str | None) -> str | None:
        # Kafka's rule for an instance id (JoinGroupRequest.validateGroupInstanceId, as for a
        # topic name), which excludes whitespace; a pod's name always passes it
        if value is not None and (
            not _INSTANCE_ID.fullmatch(value) or value in (".", "..") or len(value) > 249
        ):
            raise ValueError(
                f"{value!r} must be 1 to 249 of A-Z a-z 0-9 . _ - (no whitespace), e.g. the "
                "pod's name ($HOSTNAME), or unset for dynamic membership"
            )
        return value

    @model_validator(mode="after")
    def _topics_given(self) -> KafkaSettings:
        if not self.topics or any(not t for t in self.topics):
            raise ValueError("topics: at least one non-empty topic name is needed")
        return self


class MetricsSettings(BaseModel):
    """The HTTP server: ``/metrics``, ``/healthz``, ``/readyz`` and the status page."""

    model_config = _FROZEN

    #: the address the HTTP server listens on
    host: str = "0.0.0.0"
    #: its port
    port: int = Field(9724, ge=0, le=65535)
    #: serve /metrics over TLS when both are set (extension): the certificate (PEM file)
    tls_certfile: str | None = None
    #: the certificate's private key (PEM file)
    tls_keyfile: str | None = None
    #: HTTP basic auth on /metrics and the status page when both are set (extension; /healthz
    #: and /readyz stay open for probes): the user name
    basic_auth_username: str | None = None
    #: the password (a secret)
    basic_auth_password: SecretStr | None = None
    #: how often the daemon logs its progress line (records/s, consumer lag, watermark,
    #: horizon, open lists; streameval.progress); "0" turns it off (extension)
    progress_interval: Duration = 60_000

    @model_validator(mode="after")
    def _pairs(self) -> MetricsSettings:
        if (self.tls_certfile is None) != (self.tls_keyfile is None):
            raise ValueError("tls_certfile and tls_keyfile must be set together")
        if (self.basic_auth_username is None) != (self.basic_auth_password is None):
            raise ValueError("basic_auth_username and basic_auth_password must be set together")
        return self


class DwellGrade(BaseModel):
    model_config = _FROZEN

    #: a ``dwell`` interaction of at least this many milliseconds ...
    min_ms: int = Field(30_000, ge=0)
    #: ... grades its doc this (implicit relevance)
    grade: float = 2.0


class InterleavingSettings(BaseModel):
    """Interleaved lists (DESIGN §10; extension keys, ``[evaluation.interleaving]``)."""

    model_config = _FROZEN

    #: what a team's result earns: "clicks" (1 per clicked result, team-draft's credit) or
    #: "grades" (its implicit grade, DESIGN §3: click 1, add_to_cart 2, purchase 3, ...)
    credit: Literal["clicks", "grades"] = "clicks"
    #: the detector's bound on ever raising a false alarm for one (ranker, opponent) pair
    alpha: float = Field(0.01, gt=0.0, lt=1.0)
    #: scale of the normal mixture over the per-list preference (the effect it is quickest
    #: for): 0.03, about what a 2-3 % drop of NDCG@10 moves the preference on decisive lists in
    #: the simulator's click model (benchmarks/interleaving_scale.py)
    mixture_scale: float = Field(0.03, gt=0.0, le=10.0)
    #: distinct team names kept; later ones fold into ``"__other__"``
    max_teams: int = Field(100, ge=2)


class EvaluationSettings(BaseModel):
    """What is measured and how: NDCG@k's variants, the join, the windows, the segments, the
    bounds on state (DESIGN §3, §4, §5)."""

    model_config = _FROZEN

    #: the cutoffs k of NDCG@k (and judged coverage@k)
    ks: tuple[Annotated[int, Field(ge=1, le=1000)], ...] = Field((1, 3, 5, 10), min_length=1)
    #: gain of a grade: "linear" (rel) or "exponential" (2^rel - 1)
    gain: Literal["linear", "exponential"] = "linear"
    #: discount of rank i: "log2" (1/log2(i+1)) or "jarvelin" (ranks below ``discount_base``
    #: undiscounted, then 1/log_b(i))
    discount: Literal["log2", "jarvelin"] = "log2"
    #: the base b of the "jarvelin" discount
    discount_base: float = Field(2.0, gt=1.0)
    #: the ideal ordering of judged relevance: "pool" (every judged doc of the query, as
    #: trec_eval) or "list" (the list's own docs)
    ideal: Literal["pool", "list"] = "pool"
    #: unjudged docs of judged relevance: "zero" (gain 0, a lower bound) or "condensed" (dropped
    #: before scoring)
    unjudged: Literal["zero", "condensed"] = "zero"
    #: a list whose ideal DCG is 0: "skip" (no NDCG, counted ``no_relevance``) or "zero"
    no_relevance: Literal["skip", "zero"] = "skip"
    #: how long (event time) a list stays open for interactions after its impression
    attribution_window: Duration = 300_000
    #: how far behind the newest event time of its partition an event may be and still count:
    #: the watermark is the newest event time less this
    allowed_lateness: Duration = 10_000
    #: the sliding event-time windows reported (each a multiple of ``bucket``)
    windows: tuple[Duration, ...] = Field((60_000, 300_000, 3_600_000), min_length=1)
    #: the windows' bucket: a finalized list counts in the bucket of its impression's time
    bucket: Duration = 10_000
    #: the impression labels that become Prometheus labels (the segments)
    segment_labels: tuple[str, ...] = ("ranker", "arm")
    #: distinct segment label combinations kept; the rest fold into ``"__other__"``
    max_segments: int = Field(100, ge=1)
    #: implicit relevance: the grade of each interaction action (a doc takes its highest)
    implicit_grades: dict[str, float] = Field(
        default_factory=lambda: {"click": 1.0, "add_to_cart": 2.0, "purchase": 3.0}
    )
    dwell_grade: DwellGrade = DwellGrade()
    #: open (not yet finalized) lists kept at most; beyond it the oldest is evicted and counted
    max_open_lists: int = Field(1_000_000, ge=1)
    #: clicks waiting for their impression (read out of order) kept at most (extension)
    max_pending_clicks: int = Field(100_000, ge=0)
    #: identities (event_id, else the exact record) of judgments remembered to tell a re-sent one
    #: from a new one, outside keyed judgment topics (extension)
    max_judgment_ids: int = Field(1_000_000, ge=1)
    #: records larger than this are invalid (reason "too_large")
    max_record_bytes: int = Field(1_048_576, ge=64)
    #: an event dated more than this after the timestamp of the Kafka record that carries it
    #: is invalid (reason "future_timestamp"): one event from a wrong clock would otherwise move
    #: the watermark ahead for good and make every in-time event after it late (extension)
    max_future_skew: Duration = 300_000
    #: the control arm of an A/B test (DESIGN §9): the segment labels (and values) that mark it;
    #: the ``vs_control`` detector compares every other segment with it
    control: dict[str, str] = Field(default_factory=lambda: {"arm": "control"}, min_length=1)
    #: interleaved lists: credit, detector (extension)
    interleaving: InterleavingSettings = InterleavingSettings()

    @model_validator(mode="after")
    def _windows_fit_buckets(self) -> EvaluationSettings:
        if self.bucket <= 0:
            raise ValueError("bucket must be positive")
        for w in self.windows:
            if w <= 0 or w % self.bucket:
                raise ValueError(
                    f"windows: {format_duration(w)} is not a positive multiple of the bucket "
                    f"({format_duration(self.bucket)})"
                )
        if len(set(self.windows)) != len(self.windows):
            raise ValueError("windows: each window may appear once")
        if len(set(self.ks)) != len(self.ks):
            raise ValueError("ks: each cutoff may appear once")
        if len(set(self.segment_labels)) != len(self.segment_labels):
            raise ValueError("segment_labels: each label may appear once")
        reserved = {"k", "window", "relevance", "outcome", "detector"}
        if clash := reserved.intersection(self.segment_labels):
            raise ValueError(f"segment_labels: {sorted(clash)} are reserved label names")
        return self

    @property
    def window_names(self) -> tuple[str, ...]:
        return tuple(format_duration(w) for w in self.windows)


class DetectionSettings(BaseModel):
    """Sequential regression detectors (DESIGN §9; docs/detection.md)."""

    model_config = _FROZEN

    #: which detectors run; ``[]`` turns detection off
    detectors: tuple[Literal["vs_control", "vs_baseline"], ...] = ("vs_control", "vs_baseline")
    #: the smallest relative drop of NDCG@k worth a page (the CUSUM is tuned to it)
    min_relative_drop: float = Field(0.02, gt=0.0, lt=1.0)
    #: the false-alarm target: at most one false alarm per this much event time per series
    false_alarm_every: Duration = 30 * 86_400_000
    #: the cutoffs watched (each among ``evaluation.ks``; left at its default and 10 not
    #: scored, the largest of ``evaluation.ks`` is watched)
    ks: tuple[Annotated[int, Field(ge=1, le=1000)], ...] = Field((10,), min_length=1)
    #: the relevance sources watched
    relevance: tuple[Literal["judged", "implicit"], ...] = Field(
        ("judged", "implicit"), min_length=1
    )
    #: memory of the references, levels and variances (exponential forgetting in event time)
    half_life: Duration = 1_200_000
    #: queries remembered per series for their own reference (least recently seen forgotten)
    max_queries: int = Field(10_000, ge=1)
    #: a series steps once its residual variance rests on this many lists (warm-up)
    min_lists: int = Field(200, ge=2)

    @model_validator(mode="after")
    def _distinct(self) -> DetectionSettings:
        for name in ("detectors", "ks", "relevance"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: each value may appear once")
        if self.half_life <= 0:
            raise ValueError("half_life must be positive")
        return self


# --- [input]: the formats of the topics and files read (DESIGN §11) ----------------------------

_POINTER_HELP = "a JSON Pointer (RFC 6901): '' (the whole record) or '/a/b/0'"


def _pointer(value: str) -> str:
    """A JSON Pointer's syntax (RFC 6901 §3): empty, or '/'-separated tokens where '~' is only
    followed by '0' or '1'."""
    if value and not value.startswith("/"):
        raise ValueError(f"{value!r} is not {_POINTER_HELP}")
    for token in value.split("/")[1:]:
        rest = token.replace("~0", "").replace("~1", "")
        if "~" in rest:
            raise ValueError(f"{value!r}: '~' must be followed by 0 or 1 (RFC 6901)")
    return value


Pointer = Annotated[str, AfterValidator(_pointer)]


class _EventMapping(BaseModel):
    model_config = _FROZEN

    #: values of the mapping's ``type_field`` that make a record this event type
    when: tuple[str, ...] = ()
    #: the event time (in the mapping's ``timestamp_unit``)
    timestamp: Pointer
    #: the event's id, for duplicates
    event_id: Pointer | None = None


class ImpressionMapping(_EventMapping):
    #: the join key of the impression and its clicks
    request_id: Pointer
    #: the array of results, in rank order
    results: Pointer
    #: where the doc id sits in each item of ``results`` ("" = the item itself)
    result_doc_id: Pointer = ""
    #: the query text
    query: Pointer | None = None
    #: the stable query id used to look up judgments (default: the normalized query text)
    query_id: Pointer | None = None
    #: label name -> pointer to its value
    labels: dict[str, Pointer] = Field(default_factory=dict)
    #: label name -> the same value on every impression of this mapping
    constant_labels: dict[str, str] = Field(default_factory=dict)


class ClickMapping(_EventMapping):
    #: the request (impression) the click belongs to
    request_id: Pointer
    #: the doc interacted with
    doc_id: Pointer
    #: the interaction's name (translated through ``actions``)
    action: Pointer | None = None
    #: the team's action name -> ours (click, dwell, add_to_cart, purchase, ...); others as-is
    actions: dict[str, str] = Field(default_factory=dict)
    #: the action of a click whose ``action`` is absent (or not mapped)
    default_action: str = "click"
    #: the dwell time in milliseconds
    dwell_ms: Pointer | None = None
    #: the doc's position on the page
    position: Pointer | None = None
    #: 0 when the team counts positions from 0 (stored 1-based)
    position_base: Literal[0, 1] = 1


class JudgmentMapping(_EventMapping):
    #: the doc judged
    doc_id: Pointer
    #: the grade (a finite number)
    grade: Pointer
    #: the query id judged (``query_id`` or ``query`` is needed)
    query_id: Pointer | None = None
    #: the query text judged (normalized into the query id)
    query: Pointer | None = None
    #: who judged: a rater id, ``llm:<model>``
    judge: Pointer | None = None

    @model_validator(mode="after")
    def _query(self) -> JudgmentMapping:
        if self.query_id is None and self.query is None:
            raise ValueError("a judgment mapping needs query_id or query")
        return self


class MappingSettings(BaseModel):
    """A declarative mapping from a team's own records to the events of DESIGN §2."""

    model_config = _FROZEN

    #: the field that tells the event type (compared with each event's ``when``); absent: the
    #: mapping has one event type and every record of its topics or files is of that type
    type_field: Pointer | None = None
    #: unit of every mapped timestamp: "ms" (epoch ms, or RFC 3339 strings, as native events),
    #: "s", "us" (epoch seconds or microseconds, numbers), "rfc3339" (strings only)
    timestamp_unit: Literal["ms", "s", "us", "rfc3339"] = "ms"
    #: where each field of an impression is
    impression: ImpressionMapping | None = None
    #: where each field of a click is
    click: ClickMapping | None = None
    #: where each field of a judgment is
    judgment: JudgmentMapping | None = None

    @model_validator(mode="after")
    def _types(self) -> MappingSettings:
        events = {
            name: m
            for name, m in (
                ("impression", self.impression),
                ("click", self.click),
                ("judgment", self.judgment),
            )
            if m is not None
        }
        if not events:
            raise ValueError("a mapping needs at least one of impression, click, judgment")
        if self.type_field is None:
            if len(events) > 1:
                raise ValueError("type_field is needed to tell " + " from ".join(events) + " apart")
            return self
        seen: dict[str, str] = {}
        for name, m in events.items():
            if not m.when:
                raise ValueError(f"{name}.when: the {self.type_field!r} values of a {name}")
            for value in m.when:
                if value in seen:
                    raise ValueError(f"{name}.when: {value!r} is also {seen[value]}.when")
                seen[value] = name
        return self


class SourceFormat(BaseModel):
    """How the records of one topic or file are read."""

    model_config = _FROZEN

    #: "auto": native or UBI, told apart by shape (the default); "native", "ubi"; "mapped":
    #: through ``mapping`` (a name in ``input.mappings``)
    format: Literal["auto", "native", "ubi", "mapped"] = "auto"
    #: "json" (UTF-8, one record per message or line) or "avro" (Confluent wire format:
    #: magic byte 0, 4-byte schema id, Avro binary; needs format = "mapped")
    encoding: Literal["json", "avro"] = "json"
    #: the name of the mapping (in ``input.mappings``) of ``format = "mapped"``
    mapping: str | None = None

    @model_validator(mode="after")
    def _mapping_named(self) -> SourceFormat:
        if (self.format == "mapped") != (self.mapping is not None):
            raise ValueError('mapping names the mapping of format = "mapped" (and only then)')
        if self.encoding == "avro" and self.format != "mapped":
            raise ValueError('encoding = "avro" needs format = "mapped"')
        return self


class InputSettings(BaseModel):
    """``[input]``: the format of each topic and file read (DESIGN §11)."""

    model_config = _FROZEN

    #: topic -> its format; topics not listed are read as ``default``
    topics: dict[str, SourceFormat] = Field(default_factory=dict)
    #: for ``replay``: file (the path as given, its name, or a glob of its name) -> its format
    files: dict[str, SourceFormat] = Field(default_factory=dict)
    #: the format of every topic and file not listed
    default: SourceFormat = SourceFormat()
    #: name -> a mapping from a team's own records to the events (``format = "mapped"``)
    mappings: dict[str, MappingSettings] = Field(default_factory=dict)
    #: a Confluent-compatible schema registry (e.g. "http://registry:8081", or Apicurio's
    #: ".../apis/ccompat/v7"), asked for Avro schemas by id, each once
    schema_registry_url: str | None = None
    #: schema id -> an Avro schema file (.avsc), read at start; looked up before the registry
    avro_schemas: dict[int, Path] = Field(default_factory=dict)
    #: how long one request to the schema registry may take
    schema_registry_timeout: Duration = 5_000

    @model_validator(mode="after")
    def _references(self) -> InputSettings:
        named = {"default": self.default} | {
            f"{kind}.{name}": fmt
            for kind, table in (("topics", self.topics), ("files", self.files))
            for name, fmt in table.items()
        }
        for where, fmt in named.items():
            if fmt.mapping is not None and fmt.mapping not in self.mappings:
                raise ValueError(f"{where}.mapping: {fmt.mapping!r} is not in input.mappings")
            if fmt.encoding == "avro":
                # a topic's records name their schema by id; a file (an Avro container file)
                # carries its own
                needs_schemas = not where.startswith("files.")
                if needs_schemas and not self.avro_schemas and not self.schema_registry_url:
                    raise ValueError(
                        f"{where}.encoding: Avro needs schema_registry_url or avro_schemas"
                    )
                if importlib.util.find_spec("fastavro") is None:
                    raise ValueError(
                        f"{where}.encoding: Avro needs fastavro: pip install 'streameval[avro]'"
                    )
        for schema_id, path in self.avro_schemas.items():
            if not path.is_file():
                raise ValueError(f"avro_schemas.{schema_id}: no such file {str(path)!r}")
        return self


class Settings(BaseSettings):
    """Everything streameval can be told. Frozen: built once at start and passed down."""

    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        env_prefix="STREAMEVAL_",
        env_nested_delimiter="__",
        case_sensitive=False,
    )

    kafka: KafkaSettings = KafkaSettings()
    metrics: MetricsSettings = MetricsSettings()
    evaluation: EvaluationSettings = EvaluationSettings()
    detection: DetectionSettings = DetectionSettings()
    input: InputSettings = InputSettings()

    @model_validator(mode="after")
    def _detection_fits_evaluation(self) -> Settings:
        ev, det = self.evaluation, self.detection
        unlabelled = self.control_not_segmented()
        # a vs_control the user asked for (the detector, or its control) that cannot tell its
        # control apart is a mistake; one that is on by default is only left out (DESIGN §7)
        asked = "detectors" in det.model_fields_set or "control" in ev.model_fields_set
        if "vs_control" in det.detectors and unlabelled and asked:
            raise ValueError(
                f"evaluation.control: {unlabelled} not among evaluation.segment_labels "
                f"{list(ev.segment_labels)}: add them to evaluation.segment_labels, or leave "
                "vs_control out of detection.detectors"
            )
        if not self.detectors_in_effect:
            return self
        missing = sorted(set(det.ks) - set(ev.ks))
        if missing and "ks" in det.model_fields_set:
            raise ValueError(f"detection.ks: {missing} not among evaluation.ks {list(ev.ks)}")
        if det.false_alarm_every <= ev.bucket:
            raise ValueError("detection.false_alarm_every: must be longer than evaluation.bucket")
        return self

    def control_not_segmented(self) -> list[str]:
        """The labels of ``evaluation.control`` that are not segment labels (sorted): with any,
        no segment can be told to be the control arm."""
        ev = self.evaluation
        return sorted(set(ev.control) - set(ev.segment_labels))

    @property
    def detectors_in_effect(self) -> tuple[str, ...]:
        """The detectors that run: ``detection.detectors``, without ``vs_control`` when it is
        there by default and its control cannot be told apart (:meth:`control_not_segmented`;
        when the user asked for it, validation failed instead). The one place that decides."""
        detectors = self.detection.detectors
        if "vs_control" in detectors and self.control_not_segmented():
            return tuple(d for d in detectors if d != "vs_control")
        return detectors

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The environment overrides the file: the file's contents arrive as init kwargs. Lists
        # of plain values may be written comma-separated in the environment (config_env).
        return (ListFriendlyEnvSource(settings_cls), init_settings)


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Read the TOML file (if any) and the environment; a bad value raises ConfigError, a
    ``STREAMEVAL_…`` variable that sets nothing is logged (WARNING, one line each)."""
    data: dict[str, Any] = {}
    if config_file is not None:
        path = Path(config_file)
        try:
            with path.open("rb") as fh:
                data = tomllib.load(fh)
        except OSError as exc:
            raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(
                f"config file {path} is not valid TOML: not UTF-8 text (byte "
                f"{exc.object[exc.start]:#04x} at offset {exc.start}): give --config a TOML file"
            ) from None
    for section, values in overrides.items():
        data.setdefault(section, {}).update(values)
    for warning in check_environment(Settings, os.environ):
        logging.getLogger("streameval.config").warning("%s", warning)
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None
    except SettingsError as exc:  # what check_environment did not foresee: still one line
        raise ConfigError(f"a STREAMEVAL_ environment variable cannot be read: {exc}") from None


def _describe(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors(include_url=False):
        loc = [str(p) for p in err["loc"]]
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden" and loc:
            msg += did_you_mean(loc[-1], _fields_at(loc[:-1]))
        lines.append(f"{'.'.join(loc)}: {msg}" if loc else msg)
    return "invalid configuration: " + "; ".join(lines)


def _fields_at(loc: list[str]) -> list[str]:
    """The keys of the section at ``loc`` (e.g. ["evaluation"]): where an unknown key was."""
    model: Any = Settings
    for key in loc:
        field = getattr(model, "model_fields", {}).get(key)
        if field is None:
            return []
        model = field.annotation
    return list(getattr(model, "model_fields", {}))
