"""The platform's main job (``make demo`` / ``streams-runtime demo``): broker, workers, data, results.

Steps of :func:`run_demo`:
  1. use the configured cluster (:mod:`streams_runtime.brokers.bootstrap`: ``--bootstrap-servers``,
     ``$BOOTSTRAP_SERVERS``, the broker recorded in the project's home), or warn and start a
     throwaway one (a fresh broker means the demo's old local state is stale: it is removed first);
  2. create ``demo-payments`` and ``demo-user-totals`` (4 partitions each) explicitly;
  3. start the ledger from the payments already in the topic (none on a fresh broker);
  4. print the parallelism math and start two worker instances (processes) running the demo
     application (:mod:`streams_runtime.demo.app`) through the worker launcher; wait (bounded)
     until both are RUNNING and every task is owned, so the work is really split;
  5. produce the demo payments (JSON, keyed by user) and add them to the ledger;
  6. watch the results topic, printing progress live, until every user's latest result equals
     the ledger (count and total): OK, exit 0; a user counted above the ledger, a deadline, every
     worker gone or Ctrl-C: FAILED, exit 1;
  6b. ask every user's total through instance 0's HTTP API (interactive queries on the store;
     keys hosted by the other instance are forwarded to it, signed with a forwarding secret the
     demo generates for its workers) and check each answer against the
     ledger: a wrong answer fails the demo;
  7. with ``keep_running``: keep producing and printing live per-user results until Ctrl-C;
  8. close the workers (each closes its KafkaStreams), then stop the broker.

With ``with_airflow`` (``--with-airflow``), ``airflow standalone`` starts next to the workers
(:mod:`streams_runtime.demo.airflow_standalone`) with a ``streams_worker`` connection to instance
0's HTTP API (the state-rebuild DAG's default worker); step 5 also produces payments timestamped
yesterday (UTC), the data interval of a manual run of the daily Spark backfill, so every trigger
form works with its defaults; after step 6 the UI address and login are printed and the
provisioning DAG runs through the REST API; then every address to open is printed (consoles, API
docs, metrics, Airflow's UI and DAGs, the Data Docs); Airflow stops (SIGTERM to its process group)
before the workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from streams_runtime.brokers import bootstrap_or_throwaway, free_ports, runtime_home
from streams_runtime.demo.app import APPLICATION_ID, PARTITIONS, PAYMENTS_TOPIC, RESULTS_TOPIC, STORE
from streams_runtime.demo.results import Ledger, ResultsView, read_payments, table
from streams_runtime.kafka.clients import TopicSpec, create_admin, create_producer, create_topics
from streams_runtime.kafka.offsets import PartitionReadError
from streams_runtime.tools.progress import phase
from streams_runtime.worker import FORWARDING_SECRET_ENV, HTTP_TOKEN_ENV, WorkerLauncher, load_app, plan_for

if TYPE_CHECKING:  # types only (Airflow is started on demand)
    from streams_runtime.demo.airflow_standalone import AirflowStandalone

APP_SPEC = "streams_runtime.demo.app:app"
#: step 6: re-read the results topic to its true end after this long without a new result
RESYNC_AFTER_QUIET_S = 3.0
#: how long the workers' assignment must stay the same before the demo produces
STABLE_ASSIGNMENT_S = 1.0
USERS = [f"user-{i}" for i in range(5)]
#: with Airflow: payments timestamped yesterday (UTC), what the backfill form's default interval holds
BACKFILL_SAMPLE = 200


def say(line: str) -> None:
    print(f"[demo] {line}", flush=True)


def _payments(rng: random.Random, n: int, start: int) -> list[dict[str, Any]]:
    return [
        {"payment_id": start + i, "user": rng.choice(USERS), "amount": round(rng.uniform(1, 100), 2)}
        for i in range(n)
    ]


def _produce(
    producer: Any, batch: list[dict[str, Any]], ledger: Ledger, timestamps: list[int] | None = None
) -> None:
    for i, payment in enumerate(batch):
        extra = {"timestamp": timestamps[i]} if timestamps else {}
        producer.produce(
            PAYMENTS_TOPIC, key=payment["user"].encode(), value=json.dumps(payment).encode(), **extra
        )
        ledger.add(payment)
    remaining = producer.flush(30)
    if remaining:
        raise RuntimeError(f"{remaining} demo records were not delivered within 30 s")


def _wait_for_workers(
    launcher: WorkerLauncher, total_tasks: int, stop: threading.Event, timeout: float = 45.0
) -> None:
    """Step 4: wait until every instance is RUNNING with tasks and all tasks are owned (bounded)."""
    with phase("tasks running on the workers", total_tasks) as bar:
        _wait_loop(launcher, total_tasks, stop, timeout, bar)


def _wait_loop(
    launcher: WorkerLauncher,
    total_tasks: int,
    stop: threading.Event,
    timeout: float,
    bar: Callable[[int], None] | None,
) -> None:
    deadline = time.monotonic() + timeout
    seen: dict[Any, list[str]] = {}
    seen_since = time.monotonic()
    while time.monotonic() < deadline and not stop.is_set() and launcher.alive():
        statuses = launcher.statuses()
        tasks = {i: sorted(t for ts in s["threads"].values() for t in ts) for i, s in statuses.items()}
        if tasks != seen:
            seen, seen_since = tasks, time.monotonic()
        if bar is not None:
            bar(sum(len(t) for i, t in tasks.items() if statuses[i]["state"] == "RUNNING"))
        counts = [len(t) for t in tasks.values()]
        if (
            len(statuses) == launcher.instances
            and all(s["state"] == "RUNNING" for s in statuses.values())
            and all(tasks.values())
            and sum(counts) == total_tasks
            # balanced and settled: a first assignment can hand a new instance warm-ups only, and
            # the follow-up rebalance that moves their tasks comes a moment later
            and max(counts) - min(counts) <= 1
            and time.monotonic() - seen_since >= STABLE_ASSIGNMENT_S
        ):
            owners = "; ".join(f"instance {i}: {' '.join(t)}" for i, t in sorted(tasks.items()))
            say(f"workers running: {owners}")
            return
        time.sleep(0.1)
    say(f"workers not all running with tasks after {timeout:.0f}s; producing anyway")


def _watch(
    view: ResultsView, ledger: Ledger, launcher: WorkerLauncher, stop: threading.Event, timeout: float
) -> bool:
    """Step 6: True once the results equal the ledger; shows progress (a bar on a terminal, else a
    line about once a second)."""
    with phase("payments reflected in the results", ledger.payments) as bar:
        return _watch_loop(view, ledger, launcher, stop, timeout, bar)


def _watch_loop(
    view: ResultsView,
    ledger: Ledger,
    launcher: WorkerLauncher,
    stop: threading.Event,
    timeout: float,
    bar: Callable[[int], None] | None,
) -> bool:
    started = time.monotonic()
    next_report = started + 1.0
    quiet_since = started
    while True:
        now = time.monotonic()
        if view.poll(0.2):
            quiet_since = now
        matches, over = view.compare(ledger)
        if not matches and not over and now - quiet_since >= RESYNC_AFTER_QUIET_S:
            # no new result for a while yet not all reflected: the live read may have skipped a
            # batch (docs/decisions/0001-embedded-broker.md); re-read the topic to its true end
            with contextlib.suppress(PartitionReadError):  # the broker is slow: try again later
                view.resync()
            quiet_since = now
            matches, over = view.compare(ledger)
        if bar is not None:
            bar(view.reflected())
        if matches:
            elapsed = time.monotonic() - started
            say(f"all {ledger.payments} payments reflected in the results after {elapsed:.1f}s")
            print(table(view.latest), flush=True)
            say(
                f"OK: final per-user counts equal the produced payments "
                f"({ledger.payments} payments, {len(ledger.counts)} users)"
            )
            return True
        if over:
            say("FAILED: counted more payments than were produced: " + "; ".join(over))
            return False
        launcher.reap()
        if not launcher.alive():
            say("FAILED: every worker instance exited")
            return False
        now = time.monotonic()
        if stop.is_set() or now - started > timeout:
            reason = "interrupted" if stop.is_set() else f"timed out after {timeout:.0f}s"
            say(f"FAILED: {reason} with {view.reflected()}/{ledger.payments} payments reflected")
            print(table(view.latest, ledger.counts), flush=True)
            return False
        if now >= next_report and bar is None:
            say(f"{view.reflected()}/{ledger.payments} payments reflected in the results so far")
            next_report = now + 1.0


def produce_yesterday(producer: object, rng: random.Random, ledger: Ledger, n: int = BACKFILL_SAMPLE) -> str:
    """With Airflow: *n* payments timestamped over yesterday (UTC), the data interval a manual run
    of the daily Spark backfill covers, so its trigger form's defaults find data; returns the day."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start_ms = int((today - timedelta(days=1)).timestamp() * 1000)
    step = 86_400_000 // n
    timestamps = [start_ms + i * step + rng.randrange(step) for i in range(n)]
    _produce(producer, _payments(rng, n, ledger.payments), ledger, timestamps)
    return f"{today - timedelta(days=1):%Y-%m-%d}"


def _query_totals(http_port: int, ledger: Ledger, stop: threading.Event, timeout: float = 30.0) -> bool:
    """Step 6b: every user's total through instance 0's HTTP API, compared with the ledger."""
    base = f"http://127.0.0.1:{http_port}/stores/{STORE}/keys/"
    say(f"interactive queries through instance 0: GET {base}<user>")
    deadline = time.monotonic() + timeout
    for user in sorted(ledger.counts):
        expected = ledger.expected()[user]
        while True:
            try:
                with urllib.request.urlopen(base + urllib.parse.quote(user), timeout=5) as answer:
                    body = json.load(answer)
                break
            except urllib.error.HTTPError as exc:  # 503 while a store migrates: retry
                if exc.code != 503 or stop.is_set() or time.monotonic() > deadline:
                    say(f"FAILED: query for {user}: HTTP {exc.code} {exc.read().decode(errors='replace')}")
                    return False
            except OSError as exc:
                if stop.is_set() or time.monotonic() > deadline:
                    say(f"FAILED: query for {user}: {exc}")
                    return False
            time.sleep(0.2)
        value = body.get("value") or {}
        if set(value) == {"value", "timestamp"}:  # a timestamped store: ValueAndTimestamp
            value = value["value"] or {}
        got = {"count": value.get("count"), "total_cents": value.get("total_cents")}
        verdict = "ok" if got == expected else f"WRONG, expected {expected}"
        say(
            f"  {user}: count {got['count']}, total_cents {got['total_cents']} "
            f"(partition {body.get('partition')}, answered by {body.get('host')}) {verdict}"
        )
        if got != expected:
            return False
    return True


def _print_urls(http_port: int, instances: int, airflow: AirflowStandalone | None) -> None:
    """Every address a user opens, in one place."""
    say("open:")
    for i in range(instances):
        base = f"http://127.0.0.1:{http_port + i}"
        say(f"  console (instance {i})   {base}/ui   API docs {base}/docs   metrics {base}/metrics")
    if airflow is None:
        return
    say(f"  Airflow UI             {airflow.url}   (login {airflow.username} / {airflow.password()})")
    for dag_id in (
        "streams_provision_topics",
        "streams_spark_backfill",
        "streams_changelog_compaction_check",
        "streams_state_rebuild",
    ):
        say(f"    {dag_id:<36} {airflow.url}/dags/{dag_id}")
    say(f"  Data Docs (every report, newest first)   {airflow.url}/data-docs/")


def _run_until_interrupted(
    producer: object, view: ResultsView, ledger: Ledger, rng: random.Random, stop: threading.Event
) -> None:
    """Step 7: 50 payments a second, live results, until Ctrl-C."""
    say("running until Ctrl-C ...")
    rounds = 0
    while not stop.is_set():
        _produce(producer, _payments(rng, 50, ledger.payments), ledger)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and not stop.is_set():
            view.poll(0.1)
        busiest = max(view.latest.items(), key=lambda kv: kv[1]["count"], default=None)
        top = f"; busiest: {busiest[0]} ({busiest[1]['count']})" if busiest else ""
        say(f"{ledger.payments} payments so far, {view.reflected()} reflected in the results{top}")
        rounds += 1
        if rounds % 5 == 0:
            print(table(view.latest), flush=True)
    say("interrupted; stopping")


def run_demo(
    bootstrap_servers: str | None = None,
    records: int = 1000,
    keep_running: bool = False,
    *,
    instances: int = 2,
    threads: int = 2,
    timeout: float = 90.0,
    with_airflow: bool = False,
    airflow_port: int | None = None,
    broker: str = "tansu",
    connect_timeout: float | None = None,
) -> int:
    """Run the demo (steps in the module docstring); return the process exit code.

    ``broker`` is the kind of local broker started when no cluster is configured ("tansu", the
    embedded default, or "kafka": Apache Kafka from the setup cache); ``connect_timeout`` the
    seconds a configured cluster may take to answer (None: not checked)."""
    rng = random.Random(42)
    stop = threading.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: stop.set()) for s in signals}
    state_dir = runtime_home() / "state" / "demo"
    ok = False
    try:
        # Step 1
        with bootstrap_or_throwaway(
            bootstrap_servers,
            kind=broker,
            # the demo's own default (the README's first command): said, not warned about
            warn=lambda text: print(f"[demo] {text}", file=sys.stderr, flush=True),
            connect_timeout=connect_timeout,
        ) as kafka:
            servers, fresh = kafka.servers, kafka.throwaway
            started = {"tansu": "embedded Tansu broker; ", "kafka": "Apache Kafka; "}[broker] if fresh else ""
            say(f"Kafka at {servers} ({started}logs and state under {runtime_home()})")
            if fresh and state_dir.exists():
                shutil.rmtree(state_dir)
            # Step 2
            admin = create_admin(servers)
            topics = [TopicSpec(PAYMENTS_TOPIC, PARTITIONS), TopicSpec(RESULTS_TOPIC, PARTITIONS)]
            created = create_topics(admin, topics)
            say(
                f"topics {PAYMENTS_TOPIC} -> {RESULTS_TOPIC} ({PARTITIONS} partitions each) "
                f"{'created' if created else 'exist'}"
            )
            # Step 3
            ledger = Ledger()
            for payment in read_payments(servers, PAYMENTS_TOPIC, PARTITIONS):
                ledger.add(payment)
            if ledger.payments:
                say(f"{ledger.payments} payments from earlier runs are already in {PAYMENTS_TOPIC}")
            # Step 4
            plan = plan_for(load_app(APP_SPEC).topology, {PAYMENTS_TOPIC: PARTITIONS}, instances, threads)
            say(f"app {APPLICATION_ID}: {instances} worker instances x {threads} threads")
            for line in plan.report():
                say(f"  {line}")
            http_port = free_ports(instances)  # instance i serves http_port + i
            launcher = WorkerLauncher(
                APP_SPEC,
                instances=instances,
                threads=threads,
                bootstrap_servers=servers,
                state_dir=state_dir,
                http_port=http_port,
                # instance 0 forwards the other instance's keys to it, signed with this secret
                forwarding_secret=os.environ.get(FORWARDING_SECRET_ENV) or secrets.token_hex(24),
            )
            launcher.start()
            _wait_for_workers(launcher, plan.total_tasks, stop)
            view = ResultsView(servers, RESULTS_TOPIC, PARTITIONS)
            producer = create_producer(servers, {"partitioner": "murmur2_random"})
            airflow = None
            try:
                if with_airflow:  # next to the workers; stopped in step 8
                    from streams_runtime.demo.airflow_standalone import AirflowStandalone

                    # its streams_worker connection is instance 0's HTTP API (the rebuild DAG's default)
                    airflow = AirflowStandalone(
                        servers,
                        port=airflow_port,
                        worker_url=f"http://127.0.0.1:{http_port}",
                        worker_token=os.environ.get(HTTP_TOKEN_ENV),
                    ).start()
                    say(f"airflow standalone starting at {airflow.url} (log {airflow.log_file})")
                # Step 5
                before = ledger.payments
                _produce(producer, _payments(rng, records, before), ledger)
                say(f"produced {ledger.payments - before} payments for {len(USERS)} users")
                if airflow is not None:
                    day = produce_yesterday(producer, rng, ledger)
                    say(
                        f"produced {BACKFILL_SAMPLE} more timestamped {day} (UTC, yesterday): the data "
                        "interval of a manual streams_spark_backfill run"
                    )
                # Step 6
                ok = _watch(view, ledger, launcher, stop, timeout)
                if ok:  # Step 6b
                    ok = _query_totals(http_port, ledger, stop)
                if ok and airflow is not None:
                    from streams_runtime.demo.airflow_standalone import demo_provision

                    ok = demo_provision(airflow, say, stop.is_set)
                if ok:
                    _print_urls(http_port, instances, airflow)
                # Step 7
                if ok and keep_running:
                    _run_until_interrupted(producer, view, ledger, rng, stop)
            finally:
                # Step 8
                view.close()
                if airflow is not None:
                    say("stopping Airflow ...")
                    began = time.monotonic()
                    clean = airflow.stop()
                    how = "" if clean else " (killed: not stopped on SIGTERM in time)"
                    say(f"Airflow stopped in {time.monotonic() - began:.1f}s{how}")
                say("closing the workers ...")
                if not launcher.stop():
                    ok = False
                del producer, admin
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    say("stopped cleanly" if ok else "stopped")
    return 0 if ok else 1
