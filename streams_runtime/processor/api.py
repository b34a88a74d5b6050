"""The public Processor API: Record, Processor, ProcessorContext, PunctuationType, Cancellable.

A Processor receives one :class:`Record` at a time in ``process`` and emits records downstream
through ``context.forward``. Records are immutable; ``with_key``/``with_value``/
``with_timestamp``/``with_headers`` return copies. Headers are a tuple of ``(str, bytes|None)``
pairs (Kafka allows repeated keys).
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

Headers = tuple[tuple[str, bytes | None], ...]
"""A record's headers: ``(key, value)`` pairs in order (Kafka allows repeated keys)."""

HeadersLike = Mapping[str, object] | Iterable[tuple[str, object]] | None
"""Headers as given to :func:`normalize_headers`: None, a mapping or ``(key, value)`` pairs (a value
is bytes, None, or turned into UTF-8 text with ``str``)."""


def normalize_headers(headers: HeadersLike) -> Headers:
    """Headers given as None, a mapping or an iterable of pairs -> a tuple of (key, value) pairs."""
    if not headers:
        return ()
    if isinstance(headers, tuple) and all(isinstance(h, tuple) and len(h) == 2 for h in headers):
        return headers
    if isinstance(headers, Mapping):
        items: Iterable[tuple[Any, Any]] = headers.items()
    else:
        items = headers
    return tuple((str(k), v if v is None or isinstance(v, bytes) else str(v).encode()) for k, v in items)


class Record:
    """One record flowing through a topology: key, value, timestamp (ms) and headers."""

    __slots__ = ("key", "value", "timestamp", "headers")

    def __init__(self, key: Any, value: Any, timestamp: int, headers: Headers = ()) -> None:
        self.key = key
        self.value = value
        self.timestamp = timestamp
        self.headers = headers

    def with_key(self, key: object) -> Record:
        return Record(key, self.value, self.timestamp, self.headers)

    def with_value(self, value: object) -> Record:
        return self.__class__(self.key, value, self.timestamp, self.headers)

    def with_timestamp(self, timestamp: int) -> Record:
        if timestamp < 0:
            raise ValueError(f"timestamp must not be negative, got {timestamp}")
        return self.__class__(self.key, self.value, timestamp, self.headers)

    def with_headers(self, headers: HeadersLike) -> Record:
        return self.__class__(self.key, self.value, self.timestamp, normalize_headers(headers))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Record)
            and self.key == other.key
            and self.value == other.value
            and self.timestamp == other.timestamp
            and self.headers == other.headers
        )

    def __hash__(self) -> int:
        return hash((self.key, self.timestamp))

    def __repr__(self) -> str:
        return (
            f"Record(key={self.key!r}, value={self.value!r}, timestamp={self.timestamp}, "
            f"headers={self.headers!r})"
        )


class FixedKeyRecord(Record):
    """A record whose key a processor may not change (``process_values``)."""

    __slots__ = ()

    def with_key(self, key: object) -> Record:
        raise TypeError("a FixedKeyRecord's key cannot be changed (use process() to re-key)")


class RecordMetadata(NamedTuple):
    """Where the record being processed came from (None outside of a source record)."""

    topic: str | None
    partition: int
    offset: int


class PunctuationType(enum.Enum):
    """What drives a punctuation: advancing stream time (record timestamps) or the wall clock."""

    STREAM_TIME = "stream_time"
    WALL_CLOCK_TIME = "wall_clock_time"


class Cancellable(ABC):
    """Handle returned by ``ProcessorContext.schedule``."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop future punctuations of this schedule."""


@runtime_checkable
class ProcessorContext(Protocol):
    """What a processor sees of the task it runs in (implemented by the runtime).

    A Protocol: the runtime's context subclasses it, and a test double only needs these members.
    """

    application_id: str
    task_id: Any
    app_configs: Any

    @abstractmethod
    def forward(self, record: Record, child_name: str | None = None) -> None:
        """Send ``record`` to all children, or only to the child named ``child_name``."""

    @abstractmethod
    def get_state_store(self, name: str) -> Any:
        """A store connected to the current processor (or a global store)."""

    @abstractmethod
    def schedule(
        self, interval_ms: int, punctuation_type: PunctuationType, punctuator: Callable[[int], None]
    ) -> Cancellable:
        """Call ``punctuator(timestamp)`` every ``interval_ms`` of stream or wall-clock time."""

    @abstractmethod
    def record_metadata(self) -> RecordMetadata | None:
        """Topic/partition/offset of the source record being processed, None in a punctuation."""

    @abstractmethod
    def current_stream_time_ms(self) -> int:
        """The task's stream time (max timestamp seen), -1 before any record."""

    @abstractmethod
    def current_system_time_ms(self) -> int:
        """The (possibly mocked) wall-clock time."""

    @abstractmethod
    def commit(self) -> None:
        """Request a commit as soon as possible."""


class Processor(ABC):
    """A node of the topology. Override ``process``; ``init`` and ``close`` are optional."""

    context: ProcessorContext | None = None
    #: ``process`` reads nothing of the context and forwards to its only child: the runtime may
    #: call it without making its node current (the DSL's processors, see ``InternalProcessor``)
    context_free: bool = False

    def init(self, context: ProcessorContext) -> None:
        self.context = context

    @abstractmethod
    def process(self, record: Record) -> None:
        """Handle one record; emit with ``self.context.forward(...)``."""

    def close(self) -> None:  # noqa: B027 - optional hook, deliberately not abstract
        """Release resources; stores are closed by the runtime."""


ProcessorSupplier = Callable[[], Processor]
