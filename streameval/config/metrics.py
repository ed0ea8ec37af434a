"""``[metrics]``: the HTTP server of ``/metrics``, the probes and the status page."""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr, model_validator

from streameval.config.base import FROZEN, Duration


class MetricsSettings(BaseModel):
    """The HTTP server: ``/metrics``, ``/healthz``, ``/readyz`` and the status page."""

    model_config = FROZEN

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
