"""A fake app and a fake KafkaStreams for the launcher tests (no broker, no threads).

The fake client records what it was given in ``$FAKE_STREAMS_DIR/<instance dir>.json`` on
``start()`` and appends ``closed`` on ``close()``; ``$FAKE_STREAMS_CRASH=<instance dir>`` makes
that instance exit with code 3 shortly after it starts.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from streams_runtime import Consumed, Materialized, Produced, Serdes, StreamsBuilder


def word_count_app() -> tuple[Any, dict]:
    """Two sub-topologies (a repartition between them) reading ``words``."""
    config = {"application_id": "fake-word-count"}
    builder = StreamsBuilder()
    (
        builder.stream("words", consumed=Consumed(key_serde=Serdes.String(), value_serde=Serdes.String()))
        .group_by(lambda k, v: v)
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to("word-counts", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Long()))
    )
    return builder.build(config), config


def bare_topology():
    return word_count_app()[0]


def not_a_topology():
    return 42


def no_application_id():
    return word_count_app()[0], {}


class FakeStreams:
    """Stands in for KafkaStreams: start/close/state/set_state_listener only."""

    def __init__(self, topology: Any, config: dict) -> None:
        self.config = config
        self.state = "CREATED"
        self._listener = None
        self._name = Path(config["state_dir"]).name
        self._file = Path(os.environ["FAKE_STREAMS_DIR"]) / f"{self._name}.json"

    def set_state_listener(self, listener) -> None:
        self._listener = listener

    def _to(self, state: str) -> None:
        old, self.state = self.state, state
        if self._listener:
            self._listener(state, old)

    def start(self) -> None:
        self._to("REBALANCING")
        self._to("RUNNING")
        keys = ("bootstrap_servers", "num_stream_threads", "state_dir", "application_id")
        self._file.write_text(json.dumps({k: self.config[k] for k in keys}) + "\n")
        if os.environ.get("FAKE_STREAMS_CRASH") == self._name:
            threading.Timer(0.3, os._exit, args=(3,)).start()

    def close(self, timeout: float | None = None) -> bool:
        self._to("PENDING_SHUTDOWN")
        self._to("NOT_RUNNING")
        with self._file.open("a") as out:
            out.write("closed\n")
        return True
