"""The root settings model: the sections, the checks across them, and the sources read
(the environment over the file)."""

from __future__ import annotations

from pydantic import model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from streameval.config.detection import DetectionSettings
from streameval.config.env import ListFriendlyEnvSource
from streameval.config.evaluation import EvaluationSettings
from streameval.config.input import InputSettings
from streameval.config.judges import JudgesSettings
from streameval.config.kafka import KafkaSettings
from streameval.config.metrics import MetricsSettings
from streameval.config.propensity import PropensitySettings
from streameval.config.srm import SrmSettings


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
    srm: SrmSettings = SrmSettings()
    judges: JudgesSettings = JudgesSettings()
    propensity: PropensitySettings = PropensitySettings()

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
        if self.srm.enabled and unlabelled and "srm" in self.model_fields_set:
            raise ValueError(
                f"srm: evaluation.control's labels {unlabelled} are not among "
                f"evaluation.segment_labels {list(ev.segment_labels)}, so no list names its "
                "arm: add them to evaluation.segment_labels, or set srm.enabled = false"
            )
        if not self.detectors_in_effect:
            return self
        if "implicit_debiased" in det.relevance and not self.propensity.enabled:
            raise ValueError(
                "detection.relevance: implicit_debiased is scored only with propensity.enabled "
                "= true: turn it on, or leave implicit_debiased out"
            )
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

    @property
    def srm_in_effect(self) -> bool:
        """Whether the sample-ratio test runs: ``srm.enabled``, and the control's labels are
        segment labels (else no list names its arm; when ``[srm]`` was given, validation
        failed instead). The one place that decides."""
        return self.srm.enabled and not self.control_not_segmented()

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
        # of plain values may be written comma-separated in the environment (config.env).
        return (ListFriendlyEnvSource(settings_cls), init_settings)
