"""Printed: where and how ``KStream.print`` writes each record (Kafka Streams' Printed).

    stream.print(Printed.to_sys_out().with_label("orders"))        # [orders]: k1, v1
    stream.print(Printed.to_file("/tmp/orders.txt").with_key_value_mapper(lambda k, v: f"{k}={v}"))

Each record prints as ``[label]: <mapper(key, value)>``; the default mapper prints
``key, value`` (a missing key or value as ``null``, as Java does) and the default label is the
name of the stream printed. ``to_file`` opens (and truncates) the file when called: a path whose
directory does not exist is a TopologyError there, as in Kafka Streams.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from streams_runtime.errors import TopologyError

__all__ = ["Printed"]


def java_str(value: object) -> str:
    return "null" if value is None else str(value)


def default_mapper(key: object, value: object) -> str:
    return f"{java_str(key)}, {java_str(value)}"


@dataclass(frozen=True)
class Printed:
    """See the module docstring; build it with ``to_sys_out()`` or ``to_file(path)``."""

    stream: TextIO | None = None  # None: sys.stdout at print time (so redirections apply)
    label: str | None = None
    mapper: Callable[[Any, Any], str] = default_mapper
    name: str | None = None
    closable: bool = False

    @classmethod
    def to_sys_out(cls) -> Printed:
        return cls()

    @classmethod
    def to_file(cls, file_path: str) -> Printed:
        if file_path is None:
            raise TypeError("Printed.to_file: file_path can't be None")
        if not str(file_path).strip():
            raise TopologyError("Printed.to_file: file_path can't be an empty string")
        try:
            stream = open(file_path, "w", encoding="utf-8")  # noqa: SIM115 - held open by the printer
        except OSError as exc:
            raise TopologyError(f"Unable to write stream to file at [{file_path}] {exc}") from exc
        return cls(stream=stream, closable=True)

    def with_label(self, label: str) -> Printed:
        if label is None:
            raise TypeError("Printed.with_label: label can't be None")
        return dataclasses.replace(self, label=label)

    def with_key_value_mapper(self, mapper: Callable[[Any, Any], str]) -> Printed:
        if not callable(mapper):
            raise TypeError(f"Printed.with_key_value_mapper: mapper must be callable, got {mapper!r}")
        return dataclasses.replace(self, mapper=mapper)

    def with_name(self, name: str) -> Printed:
        return dataclasses.replace(self, name=name)

    def output(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stdout
