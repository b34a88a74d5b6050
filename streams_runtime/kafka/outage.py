"""Broker outages logged once: one WARNING when Kafka becomes unreachable, one INFO when it is back.

The clients ride out an outage by themselves (librdkafka and kafka-python reconnect; the commit
waits and retries up to ``task_timeout_ms``, see :mod:`~streams_runtime.processor.internals.task_executor`),
so a connection error is not news: what the operator needs is when the outage began and how long
it lasted. Every connection-level failure of the process is a *signal* to :func:`broker_outage`:

- :meth:`BrokerOutage.unreachable`: the first signal logs the WARNING (with its cause); later ones
  are only counted;
- :meth:`BrokerOutage.reachable` (input offsets committed, a transaction committed: answers the
  broker gave after the call): once no failure followed it for :data:`SETTLE_S` seconds (checked
  on the next success, or by a timer), logs the INFO with the outage's duration (first failure to
  first success) and the number of failures retried meanwhile. Until then a success does not end
  it (a reconnect that drops again would otherwise log the outage twice). A record handed out by
  a consumer is not a success: librdkafka hands out records it prefetched before the cut, and
  after the first disconnect it logs the same connection error only once, so such a "success"
  followed by a few quiet seconds would end an outage that is still going on.
- A failure signalled within :data:`SETTLE_S` seconds after the INFO is a straggler of the outage
  just ended, logged at DEBUG only: librdkafka hands a client its error events when that client
  is next polled, so a client polled rarely reports "all brokers are down" seconds after the
  others are talking to the broker again. A failure after that begins a new outage.

The client libraries' own per-retry error lines are signals too: :class:`ConnectionErrorFilter`,
installed on their loggers by :func:`quiet_connection_errors`, turns each one into
:meth:`~BrokerOutage.unreachable` and drops it (kept, at DEBUG, when DEBUG is on); any other
record passes unchanged. librdkafka's error events reach the clients' ``error_cb``
(:func:`streams_runtime.kafka.clients.on_client_error`): transient ones are signals, the rest are
logged.

One tracker per process: its clients talk to one cluster.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable

__all__ = [
    "SETTLE_S",
    "BrokerOutage",
    "ConnectionErrorFilter",
    "broker_outage",
    "quiet_connection_errors",
]

log = logging.getLogger("streams_runtime.kafka.outage")

#: seconds without a failure before a success ends the outage
SETTLE_S = 5.0


def _timer(delay_s: float, fn: Callable[[], None]) -> None:
    timer = threading.Timer(delay_s, fn)
    timer.daemon = True
    timer.start()


class BrokerOutage:
    """The outage rule of the module docstring.

    :param clock: seconds, monotonic (tests pass a fake).
    :param logger: where the WARNING and the INFO go.
    :param settle_s: seconds without a failure, after a success, before the outage is over.
    :param schedule: ``schedule(delay_s, fn)`` runs ``fn`` later (a daemon timer; tests pass a fake).
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        logger: logging.Logger = log,
        settle_s: float = SETTLE_S,
        schedule: Callable[[float, Callable[[], None]], None] = _timer,
    ) -> None:
        self._clock = clock
        self._log = logger
        self._settle_s = settle_s
        self._schedule = schedule
        self._lock = threading.Lock()
        self._since: float | None = None  # when the first failure of the outage was signalled
        self._last_failure = 0.0
        self._recovered_at: float | None = None  # the first success after the last failure
        self._check_pending = False
        self._failures = 0
        self._ended_at: float | None = None  # when the last outage was logged as over

    @property
    def unreachable_since(self) -> float | None:
        """When the current outage began (the clock's time), or None when there is none."""
        return self._since

    def unreachable(self, cause: str) -> None:
        """A connection-level failure (a client retries it by itself)."""
        with self._lock:
            now = self._clock()
            ended_at = self._ended_at
            straggler = self._since is None and ended_at is not None and now - ended_at < self._settle_s
            if not straggler:
                self._last_failure, self._recovered_at = now, None
                self._failures += 1
                if self._since is not None:
                    return
                self._since = now
        if straggler:
            self._log.debug(
                "Kafka unreachable (%s), reported late: a straggler of the outage just over", cause
            )
            return
        self._log.warning(
            "Kafka unreachable (%s); the clients retry by themselves and nothing fails unless it lasts "
            "past task_timeout_ms or delivery.timeout.ms; logged again when it is back",
            cause,
        )

    def reachable(self) -> None:
        """A request answered: the outage is over once no failure follows for ``settle_s`` seconds
        (checked now, and again when that time has come)."""
        if self._since is None:  # the common case, without the lock
            return
        with self._lock:
            if self._since is None:
                return
            if self._recovered_at is None:
                self._recovered_at = self._clock()
        self._settle()

    def _check(self) -> None:
        """The timer's check."""
        with self._lock:
            self._check_pending = False
        self._settle()

    def _settle(self) -> None:
        """End the outage when it has settled; else check again (once) when it may have."""
        with self._lock:
            if self._since is None or self._recovered_at is None:
                return  # over already, or failing again: the next success checks again
            wait_s = self._last_failure + self._settle_s - self._clock()
            if wait_s > 0:
                if not self._check_pending:
                    self._check_pending = True
                    self._schedule(wait_s, self._check)
                return
            lasted, failures = self._recovered_at - self._since, self._failures
            self._since = self._recovered_at = None
            self._ended_at = self._clock()
            self._failures = 0
        self._log.info(
            "Kafka reachable again after %.0fs (%d connection failures retried meanwhile)", lasted, failures
        )


_TRACKER = BrokerOutage()


def broker_outage() -> BrokerOutage:
    """The process's tracker."""
    return _TRACKER


# ---------------------------------------------------------------------------- the clients' own logs
#: a client library's record about a lost or refused connection (kafka-python: KafkaConnectionError
#: and socket errors; librdkafka: its FAIL facility and "brokers are down")
_CONNECTION_ERROR = re.compile(
    r"KafkaConnectionError|NodeNotReadyError|ConnectionResetError|ConnectionRefusedError|BrokenPipeError"
    r"|socket disconnected|Connection (?:lost|reset|refused)|brokers are down|Connect to .* failed"
    r"|Disconnected|Receive failed|Send failed"
)
#: librdkafka's log facilities of connection failures (its records' args: facility, client, text)
_LIBRDKAFKA_FACILITIES = frozenset({"FAIL", "ERROR"})


def _is_connection_error(record: logging.LogRecord) -> bool:
    args = record.args
    if isinstance(args, tuple) and len(args) == 3 and args[0] in _LIBRDKAFKA_FACILITIES:
        return args[0] == "FAIL" or bool(_CONNECTION_ERROR.search(record.getMessage()))  # librdkafka's
    text = record.getMessage()
    if record.exc_info and record.exc_info[0] is not None:
        text += f" {record.exc_info[0].__name__}"
    return bool(_CONNECTION_ERROR.search(text))


class ConnectionErrorFilter(logging.Filter):
    """Turns a client library's connection-error record (WARNING and up) into an outage signal."""

    def __init__(self, tracker: Callable[[], BrokerOutage] = broker_outage) -> None:
        super().__init__()
        self._tracker = tracker

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not _is_connection_error(record):
            return True
        self._tracker().unreachable(_first_line(record.getMessage()))
        if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
            return False
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line[:limit]


#: the loggers of kafka-python (group coordination) and librdkafka (data path) that log a line per
#: connection retry; a filter only sees records logged on its own logger, not on its children
CLIENT_LOGGERS = (
    "streams_runtime.librdkafka",
    "kafka.net.connection",
    "kafka.net.transport",
    "kafka.net.selector",
    "kafka.cluster",
    "kafka.client_async",
    "kafka.conn",
    "kafka.coordinator",
    "kafka.coordinator.base",
    "kafka.coordinator.consumer",
    "kafka.coordinator.heartbeat",
    "kafka.consumer.fetcher",
)

_installed = threading.Lock()
_FILTER = ConnectionErrorFilter()


def quiet_connection_errors() -> None:
    """Install :class:`ConnectionErrorFilter` on :data:`CLIENT_LOGGERS` (once; idempotent)."""
    with _installed:
        for name in CLIENT_LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
