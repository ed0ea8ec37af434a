"""The runtime: the drivers of the engine (the Kafka daemon, replay of logs, the demo)."""
