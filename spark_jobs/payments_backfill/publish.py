"""The publish step of a backfill: one Kafka transaction per (job, topic, interval), and its marker.

Called by :func:`spark_jobs.payments_backfill.main.run_backfill` (step 7) on the driver, after the
suite passed and the Parquet partition was written. Owns the transactional producer for the
duration of :func:`publish_transactionally` (made through :mod:`streams_runtime.kafka.clients`,
closed on every exit path) and the marker file of the interval.

The contract, for readers of the published topic and for whoever re-runs an interval:

* **Readers use ``isolation.level=read_committed``** (librdkafka's default, and what the
  ``kafka_range`` Spark source uses): they see an interval's records all at once, when its
  transaction commits, or not at all.
* **transactional.id** = ``spark-backfill.<job>.<topic>.<interval id>``: stable per job, target
  topic and data interval, so a retried Airflow task (or a second run of the same interval) calls
  ``init_transactions`` with the id of its predecessor and fences it: a zombie attempt that is
  still running can no longer commit, and its open transaction is aborted by the broker.
* **One transaction per interval**, never chunked: every record of the interval, then a flush
  that must acknowledge every record, then the commit. Any error before the commit aborts the
  transaction and raises; nothing of the attempt is committed. The transaction timeout is raised
  to 15 minutes (Apache Kafka's default ``transaction.max.timeout.ms``): an interval whose result
  takes longer to send must be cut smaller (the DAG's ``chunk_hours``).
* **Each record carries headers** ``backfill.job``, ``backfill.interval_id`` and
  ``backfill.publish_id`` (one fresh id per attempt), so a reader can tell which attempt's
  transaction a record came from.
* **Re-running an interval** (the marker): after a commit, ``<output_dir>/_published/<interval
  id>/<topic>.json`` records the transactional id, the publish id, the record count, the input
  offsets the result was computed from and a SHA-256 digest of the published records. A re-run
  whose records have the same digest publishes nothing (``skipped``): the interval is already on
  the topic exactly once. A re-run whose result changed (late records arrived in the input) publishes
  the whole new result in a new transaction, appended after the old one; the published rows are
  keyed by user and carry their window, so keyed consumers (and a compacted topic) keep the latest
  row per ``(user, window_start)``. ``force=True`` publishes again regardless. The digest, not the
  input offsets, is the key: the job reads the whole input topic (Tansu has no ``offsets_for_times``), so
  the input offsets move whenever anything is appended to the topic, even outside the interval.

Steps of :func:`publish_transactionally`:

  1. create the producer with the stable ``transactional.id`` and ``init_transactions`` (fences
     every earlier producer with that id; on Kafka their open transaction is aborted);
  2. ``begin_transaction``;
  3. produce every record (delivery reports served as it goes);
  4. flush: every record must be acknowledged, none may have failed;
  5. ``commit_transaction``: the records become visible to read_committed readers together.
  On any error in steps 2-5: ``abort_transaction`` (unless the producer was fenced: then there is
  nothing of ours left to abort) and raise :class:`PublishError`.

The window this leaves: a crash after step 5 and before the caller wrote the marker makes the
next run publish the interval once more (at-least-once only there; the rows are keyed, see above).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from streams_runtime.kafka.clients import KafkaError, KafkaException, create_producer

__all__ = [
    "MARKER_DIR",
    "PublishError",
    "PublishFencedError",
    "PublishResult",
    "publish_transactionally",
    "published_marker",
    "read_marker",
    "records_digest",
    "transactional_id",
    "write_marker",
]

log = logging.getLogger(__name__)

#: Where the markers live under the Parquet root (Spark ignores directories starting with "_").
MARKER_DIR = "_published"

#: Apache Kafka's default transaction.max.timeout.ms: the longest transaction a broker accepts.
TRANSACTION_TIMEOUT_MS = 900_000

#: librdkafka codes that mean "a newer producer holds this transactional.id".
_FENCED_CODES = {
    KafkaError._FENCED,  # noqa: SLF001 (librdkafka names its local codes with "_")
    KafkaError.PRODUCER_FENCED,
    KafkaError.INVALID_PRODUCER_EPOCH,
    KafkaError.INVALID_PRODUCER_ID_MAPPING,
}

Record = tuple[bytes | None, bytes]


class PublishError(RuntimeError):
    """The publish failed before its commit: its transaction was aborted, nothing was committed."""

    def __init__(
        self, message: str, *, transactional_id: str, publish_id: str, sent: int, aborted: bool
    ) -> None:
        super().__init__(message)
        self.transactional_id = transactional_id
        self.publish_id = publish_id
        self.sent = sent
        self.aborted = aborted


class PublishFencedError(PublishError):
    """A newer attempt took the transactional id (init_transactions): this attempt is a zombie and
    committed nothing; the newer attempt owns the interval's publish."""


@dataclass(frozen=True)
class PublishResult:
    """What :func:`publish_transactionally` committed."""

    transactional_id: str
    publish_id: str
    records: int
    digest: str


def transactional_id(job: str, topic: str, interval: str) -> str:
    """``spark-backfill.<job>.<topic>.<interval id>``: stable across retries of one interval."""
    return f"spark-backfill.{job}.{topic}.{interval}"


def records_digest(records: Iterable[Record]) -> str:
    """SHA-256 over the records in a canonical order (the order a Spark collect returns varies)."""
    h = hashlib.sha256()
    for key, value in sorted((k or b"", v) for k, v in records):
        for part in (key, value):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.hexdigest()


def published_marker(output_dir: str | Path, interval: str, topic: str) -> Path:
    """The marker file of ``interval`` published to ``topic``."""
    return Path(output_dir) / MARKER_DIR / interval / f"{topic}.json"


def read_marker(path: Path) -> dict[str, Any] | None:
    """The marker's content; ``None`` when there is none (or it is unreadable: publish again)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable publish marker %s (%s)", path, exc)
        return None


def write_marker(
    path: Path, result: PublishResult, topic: str, interval: str, source_offsets: Mapping[str, Any]
) -> None:
    """Replace the marker atomically (written only after the commit)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "topic": topic,
        "interval_id": interval,
        "transactional_id": result.transactional_id,
        "publish_id": result.publish_id,
        "records": result.records,
        "digest": result.digest,
        "source_offsets": dict(source_offsets),
        "committed_at": datetime.now(tz=UTC).isoformat(),
    }
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as out:
        json.dump(payload, out, indent=2)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)


def _is_fenced(exc: BaseException) -> bool:
    error = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    return isinstance(error, KafkaError) and error.code() in _FENCED_CODES


def publish_transactionally(
    bootstrap_servers: str,
    topic: str,
    records: Iterable[Record],
    txn_id: str,
    *,
    headers: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    timeout_s: float = 120.0,
) -> PublishResult:
    """Send ``records`` (key, value) to ``topic`` in one transaction (steps in the module docstring).

    :param txn_id: the stable transactional id (see :func:`transactional_id`).
    :param headers: added to every record, after ``backfill.publish_id``.
    :param overrides: librdkafka producer properties (``transactional.id`` is always ``txn_id``).
    :param timeout_s: for init, flush, commit and abort each.
    :raises PublishFencedError: a newer producer took ``txn_id``; nothing of this attempt commits.
    :raises PublishError: any other failure before the commit; the transaction was aborted.
    """
    publish_id = uuid.uuid4().hex
    record_headers = [("backfill.publish_id", publish_id.encode())]
    record_headers += [(k, v.encode()) for k, v in (headers or {}).items()]
    failures: list[KafkaError] = []
    acked = 0

    def on_delivery(error: Any, _msg: Any) -> None:
        nonlocal acked
        if error is not None:
            failures.append(error)
        else:
            acked += 1

    # Step 1
    producer = create_producer(
        bootstrap_servers,
        {"transaction.timeout.ms": TRANSACTION_TIMEOUT_MS, **(overrides or {}), "transactional.id": txn_id},
    )
    sent, began = 0, False
    kept: list[Record] = []
    try:
        producer.init_transactions(timeout_s)
        # Step 2
        producer.begin_transaction()
        began = True
        # Step 3
        for key, value in records:
            producer.produce(topic, key=key, value=value, headers=record_headers, on_delivery=on_delivery)
            kept.append((key, value))
            sent += 1
            producer.poll(0)
            if failures:
                raise KafkaException(failures[0])
        # Step 4
        remaining = producer.flush(timeout_s)
        if failures:
            raise KafkaException(failures[0])
        if remaining or acked != sent:
            raise TimeoutError(f"{remaining} of {sent} records not acknowledged within {timeout_s}s")
        # Step 5
        producer.commit_transaction(timeout_s)
    except Exception as exc:
        fenced = _is_fenced(exc) or any(f.code() in _FENCED_CODES for f in failures)
        aborted = False
        if began and not fenced:
            try:
                producer.abort_transaction(timeout_s)
                aborted = True
            except KafkaException as abort_exc:
                fenced = fenced or _is_fenced(abort_exc)
                log.warning("publish to %s: abort of transaction %s failed: %s", topic, txn_id, abort_exc)
        cls = PublishFencedError if fenced else PublishError
        what = (
            "fenced by a newer producer with the same transactional.id"
            if fenced
            else ("aborted" if aborted else "not committed")
        )
        raise cls(
            f"publish to {topic} ({txn_id}, attempt {publish_id}) failed after {sent} records: "
            f"{type(exc).__name__}: {exc}; transaction {what}, nothing committed",
            transactional_id=txn_id,
            publish_id=publish_id,
            sent=sent,
            aborted=aborted,
        ) from exc
    finally:
        producer.flush(0)  # serve the last callbacks; the producer is closed when dropped
    log.info("published %d records to %s in transaction %s (attempt %s)", sent, topic, txn_id, publish_id)
    return PublishResult(txn_id, publish_id, sent, records_digest(kept))
