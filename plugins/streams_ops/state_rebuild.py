"""State rebuild of a stream application's store: planning, changelog rewrite, verdict.

Plain Python (no Airflow), driven by :class:`streams_ops.operators.state_rebuild.RebuildStateStoreOperator`
and the ``streams_state_rebuild`` DAG. The workers do the rebuild itself (``POST
/admin/stores/{store}/rebuild``: close, wipe, restore from the changelog, verify); this module:

- resolves the application (:func:`resolve_application`: ``module:function`` like the worker's
  ``--app``, or a bare application id) to its store's changelog topic and source topics;
- plans which worker rebuilds which tasks (:func:`plan_rebuild`) from the group's view of the
  store that any one worker answers (``GET /admin/stores/{store}/instances``): every task of the
  store goes to the one instance running it as an active task, so each partition is rebuilt
  exactly once, whichever worker was asked;
- names the partitions a run did not rebuild (:func:`not_rebuilt`): a worker unreachable or whose
  tasks moved meanwhile fails the run, never passes it on the partitions that were rebuilt;
- rewrites a changelog from recomputed rows (:func:`rewrite_changelog`, recompute mode): a new
  record for every recomputed key, a tombstone for every key live in the changelog but absent
  from the recomputation, each in the key's task partition;
- judges the per-task reports (:func:`judge`) and renders them as a table.

Input offsets (recompute mode): the recomputation covers the input up to the application's
committed offsets (:func:`committed_offsets`); each worker reports the offsets committed when it
closed the task for the rebuild. If they differ, the tasks processed records on the old state in
between, and those updates may have overwritten recomputed keys: the verdict fails and says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from streams_ops.offsets import EOF_OVERRIDES, scan_to_eof

__all__ = [
    "EOF_OVERRIDES",
    "ApplicationInfo",
    "PartitionsNotRebuiltError",
    "StateRebuildError",
    "committed_offsets",
    "judge",
    "not_rebuilt",
    "plan_rebuild",
    "render",
    "resolve_application",
    "rewrite_changelog",
]


class StateRebuildError(RuntimeError):
    """The rebuild cannot go on, or its verdict failed; ``rows`` holds the per-task report."""

    def __init__(self, message: str, rows: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.rows = rows or []


@dataclass(frozen=True)
class ApplicationInfo:
    """What the rebuild needs to know about an application's store."""

    application_id: str
    store: str
    changelog_topic: str
    source_topics: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "application_id": self.application_id,
            "store": self.store,
            "changelog_topic": self.changelog_topic,
            "source_topics": list(self.source_topics),
        }


def resolve_application(application: str, store: str) -> ApplicationInfo:
    """``package.module:function`` (the worker's ``--app`` convention) or a bare application id.

    A bare id cannot say which topics the store reads: its changelog is taken by the naming rule
    ``<application_id>-<store>-changelog`` and ``source_topics`` is empty (restore mode needs no more).

    :raises StateRebuildError: the app has no store of that name.
    """
    if ":" not in application:
        return ApplicationInfo(application, store, f"{application}-{store}-changelog", ())
    from streams_runtime.processor.internals import topology_info
    from streams_runtime.worker import load_app

    try:
        app = load_app(application)
    except Exception as exc:  # a wrong module path or a failing app function: a retry cannot help
        raise StateRebuildError(
            f"cannot load application {application}: {type(exc).__name__}: {exc}"
        ) from exc
    infos = topology_info.sub_topologies(app.topology.internal_builder)
    for info in infos:
        if store in info.stores:
            changelog = info.changelog_topics.get(store)
            if changelog is None:
                raise StateRebuildError(
                    f"store {store!r} of {application} has no changelog (logging disabled): "
                    f"it cannot be rebuilt"
                )
            return ApplicationInfo(app.application_id, store, changelog, tuple(info.source_topics))
    known = sorted({s for i in infos for s in i.stores})
    raise StateRebuildError(f"application {application} has no store named {store!r}; its stores: {known}")


class PartitionsNotRebuiltError(StateRebuildError):
    """Some of the store's tasks were not (or cannot now be) rebuilt; ``tasks`` names them."""

    def __init__(self, message: str, tasks: Iterable[str], rows: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message, rows)
        self.tasks = sorted(tasks)


def describe_tasks(tasks: Iterable[str]) -> str:
    """``partitions [1, 3] (tasks 0_1, 0_3)``: how a report names tasks of one store."""
    ids = sorted(tasks)
    return f"partitions {sorted(int(t.rpartition('_')[2]) for t in ids)} (tasks {', '.join(ids)})"


def plan_rebuild(instances: Mapping[str, Any], wanted: Iterable[str] | None) -> dict[str, list[str]]:
    """endpoint -> the tasks it rebuilds: each task of the store (or of ``wanted``) exactly once,
    on the instance running it as an active task.

    :param instances: the answer of ``GET /admin/stores/{store}/instances`` (``tasks``,
        ``instances`` with their ``endpoint`` and ``active_tasks``).
    :raises StateRebuildError: a wanted task is not a task of the store.
    :raises PartitionsNotRebuiltError: a task has no active owner now (a rebalance is under way).
    """
    store, tasks = instances.get("store"), [str(t) for t in instances.get("tasks", [])]
    targets = tasks if wanted is None else sorted({str(t) for t in wanted})
    unknown = sorted(set(targets) - set(tasks))
    if unknown:
        raise StateRebuildError(f"tasks {unknown} are not tasks of store {store!r}; its tasks: {tasks}")
    owner = {t: i["endpoint"] for i in instances.get("instances", []) for t in i.get("active_tasks", [])}
    orphans = [t for t in targets if t not in owner]
    if orphans:
        raise PartitionsNotRebuiltError(
            f"{describe_tasks(orphans)} of store {store!r} have no active instance in the group's "
            f"assignment now (a rebalance is under way, or no instance advertises application_server): "
            f"nothing was rebuilt; run again once the group is stable",
            orphans,
        )
    plan: dict[str, list[str]] = {}
    for task in targets:
        plan.setdefault(owner[task], []).append(task)
    return {endpoint: sorted(ids) for endpoint, ids in sorted(plan.items())}


def not_rebuilt(plan: Mapping[str, list[str]], rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The planned tasks no report row covers (their instance failed, or they moved meanwhile)."""
    reported = {str(row["task_id"]) for row in rows}
    return sorted(t for tasks in plan.values() for t in tasks if t not in reported)


def committed_offsets(consumer: Any, topic: str, partitions: int, timeout: float = 30.0) -> dict[int, int]:
    """The group's committed offsets on ``topic`` (the consumer's ``group.id``); none: 0."""
    from streams_runtime.kafka.clients import TopicPartition

    found = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=timeout)
    return {tp.partition: max(0, tp.offset) for tp in found}


def live_changelog(
    consumer: Any, topic: str, partitions: int, timeout: float = 120.0
) -> dict[int, dict[bytes, bytes]]:
    """partition -> {key: latest value} of the keys whose latest record is not a tombstone."""
    latest: dict[int, dict[bytes, bytes | None]] = {p: {} for p in range(partitions)}

    def on_record(message: Any) -> None:
        latest[message.partition()][message.key()] = message.value()

    scan_to_eof(consumer, topic, dict.fromkeys(range(partitions), 0), on_record, timeout)
    return {p: {k: v for k, v in keys.items() if v is not None} for p, keys in latest.items()}


def rewrite_changelog(
    producer: Any,
    consumer: Any,
    topic: str,
    partitions: int,
    rows: Iterable[tuple[int, bytes, bytes]],
    timeout: float = 120.0,
) -> dict[int, dict[str, int]]:
    """Make ``topic``'s live content equal ``rows`` (``(partition, key, value)``), per partition.

    Steps: 1. read the changelog to its true end (live keys per partition); 2. produce every row
    (a key whose live value is already identical is skipped); 3. produce a tombstone for every live
    key no row has; 4. flush and check every delivery.

    :returns: partition -> ``{"written", "unchanged", "tombstones", "keys"}``.
    :raises StateRebuildError: a row names a partition the topic lacks, or a delivery failed.
    """
    live = live_changelog(consumer, topic, partitions, timeout)  # Step 1
    stats = {p: {"written": 0, "unchanged": 0, "tombstones": 0, "keys": 0} for p in range(partitions)}
    seen: dict[int, set[bytes]] = {p: set() for p in range(partitions)}
    failures: list[str] = []

    def on_delivery(error: Any, _message: Any) -> None:
        if error is not None:
            failures.append(str(error))

    now = int(time.time() * 1000)
    for partition, key, value in rows:  # Step 2
        if partition not in stats:
            raise StateRebuildError(
                f"a recomputed key {key!r} is in partition {partition}, but {topic} has "
                f"{partitions} partitions"
            )
        seen[partition].add(key)
        stats[partition]["keys"] += 1
        if live[partition].get(key) == value:
            stats[partition]["unchanged"] += 1
            continue
        producer.produce(
            topic, value=value, key=key, partition=partition, timestamp=now, on_delivery=on_delivery
        )
        producer.poll(0)
        stats[partition]["written"] += 1
    for partition, keys in live.items():  # Step 3
        for key in sorted(set(keys) - seen[partition]):
            producer.produce(
                topic, value=None, key=key, partition=partition, timestamp=now, on_delivery=on_delivery
            )
            stats[partition]["tombstones"] += 1
    remaining = producer.flush(timeout)  # Step 4
    if remaining or failures:
        raise StateRebuildError(
            f"rewriting {topic}: {remaining} records undelivered, {len(failures)} failed: {failures[:3]}"
        )
    return stats


def read_rows(path: str, encode_key: Any, encode_value: Any) -> list[tuple[int, bytes, bytes]]:
    """The JSON lines ``{"partition", "key", "value"}`` a recomputation wrote, encoded for the changelog."""
    rows = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                rows.append((int(row["partition"]), encode_key(row["key"]), encode_value(row["value"])))
    return rows


def judge(
    responses: Mapping[str, Mapping[str, Any]],
    *,
    input_offsets: Mapping[str, int] | None = None,
    recomputed_keys: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """One row per task from the workers' answers, with ``ok`` and ``problems`` filled.

    :param responses: endpoint -> the body of its rebuild answer.
    :param input_offsets: recompute mode: ``"topic:partition" -> offset`` the recomputation read to;
        a task closed at other offsets processed records the recomputation does not cover.
    :param recomputed_keys: recompute mode: partition (as a string) -> keys recomputed there.
    """
    rows = []
    for endpoint, body in sorted(responses.items()):
        for report in body.get("reports", []):
            problems = [report["problem"]] if report.get("problem") else []
            if not report.get("ok") and not problems:
                problems.append("restored key count differs from the changelog's live keys")
            if input_offsets is not None:
                for tp, offset in sorted(report.get("input_offsets", {}).items()):
                    if tp in input_offsets and int(input_offsets[tp]) != int(offset):
                        problems.append(
                            f"input {tp} was committed at {offset} when the task closed, but the "
                            f"recomputation read to {input_offsets[tp]}: records were processed "
                            f"on the old state meanwhile; stop the input and run again"
                        )
            if recomputed_keys is not None:
                expected = int(recomputed_keys.get(str(report.get("changelog_partition")), 0))
                if expected != report.get("store_key_count"):
                    problems.append(
                        f"the recomputation has {expected} keys in this partition, the restored "
                        f"store {report.get('store_key_count')}"
                    )
            rows.append({"endpoint": endpoint, **report, "ok": not problems, "problems": problems})
    return rows


def render(rows: list[dict[str, Any]], title: str) -> str:
    """The per-task report as a fixed-width table (for the task log)."""
    header = ("task", "endpoint", "changelog", "restored", "store keys", "changelog live keys", "ok")
    lines = [
        (
            r["task_id"],
            r["endpoint"],
            f"{r.get('changelog_topic')}-{r.get('changelog_partition')}",
            str(r.get("records_restored")),
            str(r.get("store_key_count")),
            str(r.get("changelog_live_keys")),
            "yes" if r["ok"] else "NO",
        )
        for r in rows
    ]
    widths = [
        max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(header)
    ]
    out = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in lines]
    out += [f"  {r['task_id']}: {p}" for r in rows for p in r["problems"]]
    return "\n".join(out)
