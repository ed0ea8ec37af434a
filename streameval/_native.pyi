"""Types of the extension module built from native/ (src/python.rs); see streameval.native."""

UNICODE_VERSION: str

def decode_native(raw: bytes, max_bytes: int = 1_048_576) -> tuple[object, ...]: ...
