"""The bounds of every field of an event, as module constants, so that the docs, the tests and
the decoder name the same numbers."""

MAX_ID_CHARS = 256
MAX_QUERY_CHARS = 1024
MAX_RESULTS = 1000
MAX_LABELS = 32
MAX_LABEL_KEY_CHARS = 64
MAX_LABEL_VALUE_CHARS = 256
MAX_ACTION_CHARS = 100  # UBI's own limit for action_name
MAX_JUDGE_CHARS = 256
MAX_DWELL_MS = 10**12  # about 31 years: any real dwell fits; keeps the number small
MAX_POSITION = 1_000_000
MIN_GRADE = -1000.0
MAX_GRADE = 1000.0
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
