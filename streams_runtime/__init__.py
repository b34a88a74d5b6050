"""streams_runtime: the Kafka Streams architecture in Python."""
