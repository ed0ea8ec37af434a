# streameval: the daemon (`run`), the traffic simulator (`simulate`) and the other sub-commands in
# one image. docker-compose.yml builds it; `docker build -t streameval .` works on its own.
#
# For Kubernetes (the Helm chart in deploy/helm/streameval takes the image as image.repository
# and image.tag, the tag defaulting to the chart's appVersion = the package version), build, tag
# with the version and push to a registry the cluster pulls from:
#
#   VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' streameval/__init__.py)
#   docker build -t registry.example.com/search/streameval:"$VERSION" .
#   docker push registry.example.com/search/streameval:"$VERSION"
#
# Optional extras as a build argument, e.g. the faster consumer (kafka.consumer =
# "confluent-kafka": a restart ready in ~20 s instead of ~28 s) and Avro input:
#   docker build --build-arg EXTRAS=confluent,avro -t ... .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Install the package (and only its runtime dependencies), then drop the sources: the image runs
# the installed `streameval` entry point, not a checkout. README* (pyproject's `readme`, the
# package's long description) is a pattern so that a checkout without it still builds.
ARG EXTRAS=""
COPY pyproject.toml README* /tmp/build/
COPY streameval /tmp/build/streameval
RUN pip install "/tmp/build${EXTRAS:+[$EXTRAS]}" && rm -rf /tmp/build

# No state on disk (Kafka is the source of truth), so a system user without a home is enough.
RUN useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin streameval
USER 10001:10001
WORKDIR /tmp

# /metrics, /healthz and /readyz (metrics.port, DESIGN §7)
EXPOSE 9724

# The slim image has no curl: ask /healthz with the interpreter that is there anyway. The port
# follows STREAMEVAL_METRICS__PORT when it is overridden. Meaningful for `run`; a `simulate`
# container serves nothing, so compose turns the check off for it.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('STREAMEVAL_METRICS__PORT', '9724') + '/healthz', timeout=4)"]

ENTRYPOINT ["streameval"]
CMD ["run"]
