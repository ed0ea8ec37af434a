"""The drivers: what runs the engine against a source of records (the daemon, replay, demo)."""
