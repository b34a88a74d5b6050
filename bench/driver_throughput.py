"""Per-record cost of the framework, measured through the TopologyTestDriver.

Two workloads, each next to a plain Python loop doing the same work in the same run:

1. stateless chain: deserialize -> filter -> map_values -> select_key -> serialize to a sink;
2. per-key count on a RocksDB store (group_by_key().count()), caching on.

Two more, reported next to the stateless chain (ratio = their rate / the chain's driver rate):

3. windowed count: 60 s tumbling windows per key on a RocksDB window store;
4. stream-stream join: two streams of the same keys joined within 10 s;
5. foreign-key table join: orders (a table of 5000 order ids) joined with their user's row
   (1000 users); one record in ten is a user update, re-joined with every order of that user.
6. cogroup: two streams (alternating records) aggregated into one RocksDB store per key, each
   with its own aggregator (``group_by_key().cogroup(...).cogroup(...).aggregate(...)``).

The baseline loops do the same (de)serialization and, for the count, the same RocksDB reads and
writes through rocksdict, so the ratio is the framework's overhead per record.

Run:  .venv/bin/python bench/driver_throughput.py [--records 200000]
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import tempfile
import time

from streams_runtime import (
    Consumed,
    JoinWindows,
    Materialized,
    Produced,
    Serdes,
    StreamsBuilder,
    TimeWindows,
    TopologyTestDriver,
)


def _inputs(n: int) -> list[tuple[str, str]]:
    return [
        (f"user-{i % 1000}", json.dumps({"id": i, "amount": i % 97, "user": f"user-{i % 1000}"}))
        for i in range(n)
    ]


def _is_big(value: dict) -> bool:
    return value["amount"] > 10


def _enrich(value: dict) -> dict:
    return {**value, "big": True}


def stateless_framework(records: list[tuple[str, str]]) -> tuple[float, int]:
    builder = StreamsBuilder()
    (
        builder.stream("in", consumed=Consumed(key_serde=Serdes.String(), value_serde=Serdes.Json()))
        .filter(lambda k, v: _is_big(v))
        .map_values(_enrich)
        .select_key(lambda k, v: v["user"])
        .to("out", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Json()))
    )
    raw = [(k, json.loads(v)) for k, v in records]
    with TopologyTestDriver(builder.build(), {"application_id": "bench"}) as driver:
        source = driver.create_input_topic("in", Serdes.String(), Serdes.Json())
        sink = driver.create_output_topic("out", Serdes.String(), Serdes.Json())
        start = time.perf_counter()
        for key, value in raw:
            source.pipe_input(key, value)
        elapsed = time.perf_counter() - start
        out = sink.queue_size()
    return elapsed, out


def stateless_baseline(records: list[tuple[str, str]]) -> tuple[float, int]:
    key_serde, value_serde = Serdes.String(), Serdes.Json()
    raw = [(k, json.loads(v)) for k, v in records]
    out: list[tuple[bytes, bytes]] = []
    start = time.perf_counter()
    for key, value in raw:
        # what a producer would hand over and a consumer would give back
        kb, vb = key_serde.serialize("in", key), value_serde.serialize("in", value)
        k, v = key_serde.deserialize("in", kb), value_serde.deserialize("in", vb)
        if not _is_big(v):
            continue
        v = _enrich(v)
        k = v["user"]
        out.append((key_serde.serialize("out", k), value_serde.serialize("out", v)))
    return time.perf_counter() - start, len(out)


def count_framework(records: list[tuple[str, str]], state_dir: str) -> tuple[float, int]:
    builder = StreamsBuilder()
    (
        builder.stream("in", consumed=Consumed(key_serde=Serdes.String(), value_serde=Serdes.String()))
        .group_by_key()
        .count(materialized=Materialized.as_("counts"))
        .to_stream()
        .to("out", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Long()))
    )
    config = {"application_id": "bench-count", "state_dir": state_dir}
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("in", Serdes.String(), Serdes.String())
        sink = driver.create_output_topic("out", Serdes.String(), Serdes.Long())
        start = time.perf_counter()
        for key, value in records:
            source.pipe_input(key, value)
        elapsed = time.perf_counter() - start
        out = sink.queue_size()
    return elapsed, out


def count_baseline(records: list[tuple[str, str]], state_dir: str) -> tuple[float, int]:
    from rocksdict import Rdict  # the baseline's own store, outside the framework

    db = Rdict(f"{state_dir}/baseline")
    key_serde, value_serde = Serdes.String(), Serdes.String()
    out: list[tuple[bytes, bytes]] = []
    start = time.perf_counter()
    for key, value in records:
        kb, vb = key_serde.serialize("in", key), value_serde.serialize("in", value)
        k = key_serde.deserialize("in", kb)
        value_serde.deserialize("in", vb)
        stored = db.get(kb)
        count = (struct.unpack(">q", stored[8:])[0] if stored else 0) + 1
        db[kb] = struct.pack(">qq", 0, count)  # timestamp + value, as a timestamped store keeps it
        out.append((key_serde.serialize("out", k), struct.pack(">q", count)))
    elapsed = time.perf_counter() - start
    db.close()
    return elapsed, len(out)


def windowed_count_framework(records: list[tuple[str, str]], state_dir: str) -> tuple[float, int]:
    builder = StreamsBuilder()
    (
        builder.stream("in", consumed=Consumed(key_serde=Serdes.String(), value_serde=Serdes.String()))
        .group_by_key()
        .windowed_by(TimeWindows.of_size_with_no_grace(60_000))
        .count(materialized=Materialized.as_("windowed-counts"))
        .to_stream(lambda windowed, count: windowed.key)
        .to("out", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Long()))
    )
    config = {"application_id": "bench-windowed", "state_dir": state_dir}
    with TopologyTestDriver(builder.build(), config) as driver:
        source = driver.create_input_topic("in", Serdes.String(), Serdes.String())
        sink = driver.create_output_topic("out", Serdes.String(), Serdes.Long())
        start = time.perf_counter()
        for i, (key, value) in enumerate(records):
            source.pipe_input(key, value, timestamp=i * 10)  # 100 records/s of event time
        elapsed = time.perf_counter() - start
        out = sink.queue_size()
    return elapsed, out


def join_framework(records: list[tuple[str, str]], state_dir: str) -> tuple[float, int]:
    builder = StreamsBuilder()
    strings = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())
    left = builder.stream("left", consumed=strings)
    right = builder.stream("right", consumed=strings)
    left.join(right, lambda a, b: a[:8] + b[:8], JoinWindows.of_time_difference_with_no_grace(10_000)).to(
        "out", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.String())
    )
    config = {"application_id": "bench-join", "state_dir": state_dir}
    with TopologyTestDriver(builder.build(), config) as driver:
        sides = (
            driver.create_input_topic("left", Serdes.String(), Serdes.String()),
            driver.create_input_topic("right", Serdes.String(), Serdes.String()),
        )
        sink = driver.create_output_topic("out", Serdes.String(), Serdes.String())
        start = time.perf_counter()
        for i in range(len(records)):
            key, value = records[i // 2]  # each key arrives on the left, then 10 ms later on the right
            sides[i % 2].pipe_input(key, value, timestamp=i * 10)
        elapsed = time.perf_counter() - start
        out = sink.queue_size()
    return elapsed, out


def fk_join_framework(records: list[tuple[str, str]], state_dir: str) -> tuple[float, int]:
    builder = StreamsBuilder()
    strings = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())
    orders = builder.table("orders", consumed=strings)
    users = builder.table("users", consumed=strings)
    orders.join(
        users, lambda order: order.split("|")[0], lambda order, user: order[:12] + user[:12]
    ).to_stream().to("out", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.String()))
    config = {"application_id": "bench-fk-join", "state_dir": state_dir}
    with TopologyTestDriver(builder.build(), config) as driver:
        order_in = driver.create_input_topic("orders", Serdes.String(), Serdes.String())
        user_in = driver.create_input_topic("users", Serdes.String(), Serdes.String())
        sink = driver.create_output_topic("out", Serdes.String(), Serdes.String())
        start = time.perf_counter()
        for i in range(len(records)):
            user, value = records[i]
            if i % 10 == 0:
                user_in.pipe_input(user, value[:40], timestamp=i)
            else:
                order_in.pipe_input(f"order-{i % 5000}", f"{user}|{i}", timestamp=i)
        elapsed = time.perf_counter() - start
        out = sink.queue_size()
    return elapsed, out


def cogroup_framework(records: list[tuple[str, str]], state_dir: str) -> tuple[float, int]:
    builder = StreamsBuilder()
    strings = Consumed(key_serde=Serdes.String(), value_serde=Serdes.String())
    clicks = builder.stream("clicks", consumed=strings).group_by_key()
    purchases = builder.stream("purchases", consumed=strings).group_by_key()
    (
        clicks.cogroup(lambda k, v, agg: agg + 1)
        .cogroup(purchases, lambda k, v, agg: agg + 100)
        .aggregate(lambda: 0, Materialized.as_("activity").with_value_serde(Serdes.Long()))
        .to_stream()
        .to("out", produced=Produced(key_serde=Serdes.String(), value_serde=Serdes.Long()))
    )
    config = {"application_id": "bench-cogroup", "state_dir": state_dir}
    with TopologyTestDriver(builder.build(), config) as driver:
        sides = (
            driver.create_input_topic("clicks", Serdes.String(), Serdes.String()),
            driver.create_input_topic("purchases", Serdes.String(), Serdes.String()),
        )
        sink = driver.create_output_topic("out", Serdes.String(), Serdes.Long())
        start = time.perf_counter()
        for i, (key, value) in enumerate(records):
            sides[i % 2].pipe_input(key, value, timestamp=i)
        elapsed = time.perf_counter() - start
        out = sink.queue_size()
    return elapsed, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    records = _inputs(args.records)
    rows = []
    for name, framework, baseline, stateful in (
        ("stateless chain", stateless_framework, stateless_baseline, False),
        ("count on RocksDB", count_framework, count_baseline, True),
    ):
        print(f"[bench] {name}: {args.records} records ...", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            f_time, f_out = framework(records, d1) if stateful else framework(records)
            b_time, b_out = baseline(records, d2) if stateful else baseline(records)
        if f_out != b_out:
            print(f"[bench] {name}: framework emitted {f_out} records, baseline {b_out}", file=sys.stderr)
            return 1
        rows.append((name, args.records / f_time, args.records / b_time, f_out))
    chain_rate = rows[0][1]
    for name, framework in (
        ("windowed count", windowed_count_framework),
        ("stream-stream join", join_framework),
        ("FK table join", fk_join_framework),
        ("cogroup", cogroup_framework),
    ):
        print(f"[bench] {name}: {args.records} records ...", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as d:
            f_time, f_out = framework(records, d)
        rows.append((name, args.records / f_time, None, f_out))
    print(
        f"{'workload':<18} {'driver rec/s':>14} {'plain loop rec/s':>17} {'ratio':>7}"
        f" {'vs chain':>9} {'outputs':>9}"
    )
    for name, f_rate, b_rate, out in rows:
        loop = f"{b_rate:>17,.0f}" if b_rate else f"{'-':>17}"
        ratio = f"{f_rate / b_rate:>7.2f}" if b_rate else f"{'-':>7}"
        print(f"{name:<18} {f_rate:>14,.0f} {loop} {ratio} {f_rate / chain_rate:>9.2f} {out:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
