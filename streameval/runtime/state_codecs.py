"""The state topic's codecs: what its records' values are (the window buckets, and the
detectors' and interleaving tests' records), handed to :mod:`streameval.kafka.state`, which
imports none of windows/, detect/ or interleave/."""

from __future__ import annotations

from streameval.detect.persisted import PAIRS, SRM, encode_detector_bucket, encode_progress
from streameval.group.table import KINDS, PROGRESS, SNAPSHOT, DetectorTable
from streameval.interleave.partitioned import encode_pair_bucket
from streameval.kafka.state import StateTopic
from streameval.kafka.state_table import StateCodecs, StateTable
from streameval.srm.partitioned import encode_arm_bucket
from streameval.windows.persisted import BadState, decode_bucket, encode_bucket
from streameval.windows.store import Bucket


def _decode_bucket(raw: bytes) -> Bucket | str:
    """A window bucket, or why the value is not one."""
    bucket = decode_bucket(raw)
    return bucket.reason if isinstance(bucket, BadState) else bucket


#: the daemon's state topic: window buckets, and the detectors' table
STATE_CODECS: StateCodecs[Bucket, DetectorTable] = StateCodecs(
    encode_bucket=encode_bucket,
    decode_bucket=_decode_bucket,
    detection=DetectorTable,
    kinds=KINDS,
    pairs_kind=PAIRS,
    progress_kind=PROGRESS,
    snapshot_kind=SNAPSHOT,
    encode_detector_bucket=encode_detector_bucket,
    encode_pair_bucket=encode_pair_bucket,
    encode_progress=encode_progress,
    srm_kind=SRM,
    encode_srm_bucket=encode_arm_bucket,
)

#: the state topic as the daemon reads and writes it
DaemonStateTopic = StateTopic[Bucket, DetectorTable]
#: its table
DaemonStateTable = StateTable[Bucket, DetectorTable]
