"""Kafka plumbing, independent of the pipeline: client settings, the co-partitioning assignor,
the judgment table reader, the dead-letter sink and consumer lag. Records stay raw bytes here."""

from streameval.kafka.assignor import CoPartitionedAssignor, copartition_problem
from streameval.kafka.client import client_config
from streameval.kafka.dlq import REASON_HEADER, SOURCE_HEADER, DeadLetterSink
from streameval.kafka.judgments import JudgmentReader
from streameval.kafka.lag import LagSampler, consumer_lag, records_behind
from streameval.kafka.records import RawRecord

__all__ = [
    "REASON_HEADER",
    "SOURCE_HEADER",
    "CoPartitionedAssignor",
    "DeadLetterSink",
    "JudgmentReader",
    "LagSampler",
    "RawRecord",
    "client_config",
    "consumer_lag",
    "copartition_problem",
    "records_behind",
]
