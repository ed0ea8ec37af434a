#!/usr/bin/env bash
# One-shot topic set-up for the compose stack (service `kafka-init`, apache/kafka image).
# Idempotent: existing topics are kept, but impressions and clicks must have the same partition
# count (DESIGN §6: partition i of both is read by one member, so a list's events meet), and that
# is checked, not assumed, because an earlier run may have created them differently.
set -euo pipefail

BOOTSTRAP="${BOOTSTRAP_SERVERS:-kafka:9092}"
PARTITIONS="${TOPIC_PARTITIONS:-4}"
TOPICS_SH="${KAFKA_HOME:-/opt/kafka}/bin/kafka-topics.sh"

echo "waiting for Kafka at ${BOOTSTRAP}"
for attempt in $(seq 1 60); do
  if "$TOPICS_SH" --bootstrap-server "$BOOTSTRAP" --list >/dev/null 2>&1; then
    break
  fi
  if [ "$attempt" -eq 60 ]; then
    echo "Kafka at ${BOOTSTRAP} did not answer" >&2
    exit 1
  fi
  sleep 2
done

create() {  # create TOPIC PARTITIONS [--config k=v ...]
  local topic=$1 partitions=$2
  shift 2
  "$TOPICS_SH" --bootstrap-server "$BOOTSTRAP" --create --if-not-exists \
    --topic "$topic" --partitions "$partitions" --replication-factor 1 "$@"
}

partition_count() {
  "$TOPICS_SH" --bootstrap-server "$BOOTSTRAP" --describe --topic "$1" \
    | sed -n 's/.*PartitionCount: *\([0-9][0-9]*\).*/\1/p' | head -n 1
}

# Impressions and clicks: keyed by request_id, read in the consumer group.
create search-impressions "$PARTITIONS"
create search-clicks "$PARTITIONS"
# Judgments: keyed by query_id + doc_id, the latest grade per key is all that matters.
create search-judgments 1 --config cleanup.policy=compact
# Dead letters: invalid events with the reason in a header; keep them a week.
create streameval-dlq 1 --config retention.ms=604800000

impressions=$(partition_count search-impressions)
clicks=$(partition_count search-clicks)
if [ "$impressions" != "$clicks" ]; then
  echo "search-impressions has ${impressions} partitions but search-clicks has ${clicks}:" \
    "they must be equal (delete both topics or add partitions to the smaller one)" >&2
  exit 1
fi
echo "topics ready: search-impressions and search-clicks with ${impressions} partitions," \
  "search-judgments (compacted), streameval-dlq"
