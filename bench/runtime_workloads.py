"""One measured run of a benchmark harness in bench/, in its own process.

Called by the harnesses (``runtime_throughput.py``, ``eos_throughput.py``, ``peers.py``) as
``python bench/runtime_workloads.py '<json spec>'``; prints one JSON line: ``seconds`` (ready to
consume until the last input record is processed), ``cpu_s`` (user + system time of the whole
process over that span), ``seconds_to_commit`` (ready until every input offset is committed: the
processing time plus the wait for the next commit), ``peak_rss_mb`` and, with ``profile``, a
cProfile summary of every thread.

With ``"instances": n`` (n > 1) the process is one of n instances of the application started
together: it runs until the group has committed every input offset and prints wall-clock
``ready_at``, ``processed_at`` (its last processed record) and ``committed_at`` with its CPU time,
which the harness combines (``peers.combine_instances``).

The framework runs build the topologies below and run them on one KafkaStreams client with one
stream thread; the last record is seen in the thread's ``process-total`` metric (read every
20 ms), the commit by polling the committed offsets of the application's group.
"""

from __future__ import annotations

import cProfile
import io
import json
import pstats
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, TopicPartition  # noqa: E402

from bench import hand_loops  # noqa: E402
from streams_runtime import (  # noqa: E402
    Consumed,
    Grouped,
    Joined,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TimeWindows,
)
from streams_runtime.kafka.profile import client_config  # noqa: E402


def stateless_topology(source: str, output: str, app_id: str) -> Any:
    """filter(even amount) -> map_values(enrich) -> to, byte keys, JSON values."""
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed(key_serde=Serdes.Bytes(), value_serde=Serdes.Json()))
        .filter(lambda key, value: hand_loops.keep(value))
        .map_values(hand_loops.enrich)
        .to(output, produced=Produced(key_serde=Serdes.Bytes(), value_serde=Serdes.Json()))
    )
    return builder.build({"application_id": app_id})


def stateful_topology(source: str, output: str, app_id: str, cache: bool = False) -> Any:
    """group_by_key -> count on RocksDB (changelog on; record cache off unless ``cache``: every
    update is emitted, as the hand loop does) -> to_stream -> map_values({"key", "count"}) -> to,
    JSON values."""
    materialized = Materialized.as_("bench-counts")
    if not cache:
        materialized = materialized.with_caching_disabled()
    builder = StreamsBuilder()
    (
        builder.stream(source, consumed=Consumed(key_serde=Serdes.String(), value_serde=Serdes.Json()))
        .group_by_key()
        .count(materialized=materialized)
        .to_stream()
        .map_values(lambda key, count: hand_loops.count_update(key, count))
        .to(output, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
    )
    return builder.build({"application_id": app_id})


def rekey_join_window_topology(source: str, items: str, output: str, app_id: str) -> Any:
    """W3: select_key(item) (a repartition) -> join the items table (category) -> group_by_key ->
    1-minute tumbling windows with 10 s grace -> aggregate the amounts (record cache on, the
    default) -> to_stream -> ``item@window-start``: ``{"total"}``, JSON values."""
    json_values = Consumed(key_serde=Serdes.String(), value_serde=Serdes.Json())
    builder = StreamsBuilder()
    table = builder.table(items, consumed=json_values)
    (
        builder.stream(source, consumed=json_values)
        .select_key(lambda user, payment: payment["item"])
        .join(table, hand_loops.join_item, Joined.with_(Serdes.String(), Serdes.Json(), Serdes.Json()))
        .group_by_key(Grouped.with_(Serdes.String(), Serdes.Json()))
        .windowed_by(TimeWindows.of_size_and_grace(hand_loops.WINDOW_MS, hand_loops.GRACE_MS))
        .aggregate(
            lambda: 0,
            lambda item, sale, total: total + sale["amount"],
            Materialized(store_name="bench-sales", key_serde=Serdes.String(), value_serde=Serdes.Long()),
        )
        .to_stream()
        .map(lambda window, total: (f"{window.key}@{window.window.start}", {"total": total}))
        .to(output, produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
    )
    return builder.build({"application_id": app_id})


class _ThreadProfiles:
    """cProfile in every stream thread started after :meth:`install` (threading.setprofile hook).

    Only threads named ``*StreamThread*`` are profiled: the membership (heartbeat) threads spend
    their time waiting and would bury the processing path under ``epoll``/``sleep`` entries.
    """

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []

    def install(self) -> None:
        def first_call(frame: Any, event: str, arg: Any) -> None:
            if "StreamThread" not in threading.current_thread().name:
                sys.setprofile(None)
                return
            profile = cProfile.Profile()
            self.profiles.append(profile)
            profile.enable()  # replaces this hook for the rest of the thread

        threading.setprofile(first_call)

    def summary(self, top: int = 30) -> str:
        for profile in self.profiles:
            profile.disable()
        if not self.profiles:
            return "(no thread was profiled)"
        out = io.StringIO()
        stats = pstats.Stats(self.profiles[0], stream=out)
        for profile in self.profiles[1:]:
            stats.add(profile)
        stats.strip_dirs().sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
        return out.getvalue()


def _committed_done(consumer: Consumer, topic: str, ends: dict[int, int]) -> bool:
    committed = consumer.committed([TopicPartition(topic, p) for p in ends], timeout=5)
    return all(tp.offset >= ends[tp.partition] for tp in committed)


def run_framework(spec: dict) -> dict:
    """Run the workload's topology on KafkaStreams until every input offset is committed."""
    from streams_runtime.kafka_streams import KafkaStreams

    app_id = spec["group"]
    if spec["workload"].startswith("stateless"):
        topology = stateless_topology(spec["input"], spec["output"], app_id)
    elif spec["workload"].startswith("windowed"):
        topology = rekey_join_window_topology(spec["input"], spec["items"], spec["output"], app_id)
    else:
        topology = stateful_topology(spec["input"], spec["output"], app_id, cache=spec.get("cache", False))
    config = {
        "application_id": app_id,
        "bootstrap_servers": spec["servers"],
        "num_stream_threads": 1,
        "commit_interval_ms": spec["commit_ms"],
        "state_dir": spec["state_dir"],
        # the hand loops' consumer settings (session, heartbeat, fetch waits)
        **{f"consumer.{k}": v for k, v in hand_loops.CONSUMER.items() if k.endswith(".ms")},
        **spec.get("config", {}),  # e.g. processing_guarantee (bench/eos_throughput.py)
    }
    ends = {int(p): n for p, n in spec["ends"].items()}
    watcher = Consumer(client_config("consumer", spec["servers"], {"group.id": app_id}))
    profiles = _ThreadProfiles()
    if spec.get("profile"):
        profiles.install()
    streams = KafkaStreams(topology, config)
    running = threading.Event()
    streams.set_state_listener(
        lambda new, old: running.set() if str(getattr(new, "name", new)) == "RUNNING" else None
    )
    streams.start()
    if not running.wait(120):
        raise RuntimeError(f"KafkaStreams did not reach RUNNING in 120 s (state {streams.state})")
    if spec.get("instances", 1) > 1:
        result = _share_of_the_group(streams, watcher, spec, ends)
    else:
        started, cpu0 = time.perf_counter(), hand_loops.cpu_seconds()
        total = spec.get("processed_total") or sum(ends.values())
        while _processed(streams) < total:
            _check_alive(streams)
            time.sleep(0.02)
        seconds, cpu = time.perf_counter() - started, hand_loops.cpu_seconds() - cpu0
        while not _committed_done(watcher, spec["input"], ends):
            _check_alive(streams)
            time.sleep(0.05)
        result = {"seconds": seconds, "cpu_s": cpu, "seconds_to_commit": time.perf_counter() - started}
    result["profile"] = profiles.summary() if spec.get("profile") else None
    streams.close(timeout=30)
    watcher.close()
    return result


def _processed(streams: Any) -> int:
    return sum(t.metrics.snapshot()["process-total"] for t in streams.local_threads())


def _group_caught_up(consumer: Consumer, app_id: str, source: str, ends: dict[int, int]) -> bool:
    """The group committed the source to its ends and, after that, each repartition topic to its
    end (final by then: the source's offsets are committed only once their outputs are acked)."""
    if not _committed_done(consumer, source, ends):
        return False
    topics = consumer.list_topics(timeout=5).topics
    internal = [
        TopicPartition(name, p)
        for name, meta in topics.items()
        if name.startswith(f"{app_id}-") and name.endswith("-repartition")
        for p in meta.partitions
    ]
    for tp in consumer.committed(internal, timeout=5) if internal else []:
        end = consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=5)[1]
        if end > 0 and tp.offset < end:
            return False
    return True


def _share_of_the_group(streams: Any, watcher: Consumer, spec: dict, ends: dict[int, int]) -> dict:
    """One of several instances: no instance sees the whole input, so the run ends when the
    group has committed every input offset (repartition topics included); reported in
    wall-clock time (``ready_at``, the last change of this instance's ``process-total`` as
    ``processed_at``, ``committed_at``) for the harness to combine, with the CPU time up to the
    last record this instance processed."""
    ready_at, cpu0 = time.time(), hand_loops.cpu_seconds()
    processed_at, cpu, seen = ready_at, 0.0, 0
    while not _group_caught_up(watcher, spec["group"], spec["input"], ends):
        _check_alive(streams)
        now = _processed(streams)
        if now != seen:
            seen, processed_at, cpu = now, time.time(), hand_loops.cpu_seconds() - cpu0
        time.sleep(0.02)
    return {
        "ready_at": ready_at,
        "processed_at": processed_at,
        "committed_at": time.time(),
        "cpu_s": cpu,
        "processed": seen,
    }


def _check_alive(streams: Any) -> None:
    if str(getattr(streams.state, "name", streams.state)) in ("ERROR", "NOT_RUNNING", "PENDING_ERROR"):
        raise RuntimeError(f"KafkaStreams stopped: {streams.state}")


def run_hand(spec: dict) -> dict:
    """Run the workload's hand loop (bench/hand_loops.py)."""
    ends = {int(p): n for p, n in spec["ends"].items()}
    interval = spec["commit_ms"] / 1000
    if spec["workload"].startswith("stateless"):
        timing = hand_loops.stateless_loop(
            spec["servers"], spec["group"], spec["input"], spec["output"], ends, interval
        )
    elif spec["workload"].startswith("windowed"):
        timing = hand_loops.windowed_join_loop(
            spec["servers"],
            spec["group"],
            spec["input"],
            spec["items"],
            spec["output"],
            ends,
            interval,
            spec["changelog"],
        )
    else:
        timing = hand_loops.stateful_loop(
            spec["servers"], spec["group"], spec["input"], spec["output"], spec["changelog"], ends, interval
        )
    return timing


def peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM; ru_maxrss would include the parent's peak before exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    spec = json.loads(sys.argv[1])
    result = run_framework(spec) if spec["workload"].endswith("framework") else run_hand(spec)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
