"""KafkaStreams against the embedded broker: a stateless topology end to end (one thread)."""

from __future__ import annotations

from streams_runtime import Consumed, KafkaStreams, KafkaStreamsState, Produced, Serdes, StreamsBuilder
from tests.integration.streams_support import make_topics, produce, read_all, streams_config, wait_running


def test_should_filter_and_map_records_end_to_end_with_one_thread(bootstrap_servers, unique_name, tmp_path):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 2, sink: 2})
    builder = StreamsBuilder()
    (
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String()))
        .filter(lambda k, v: int(v) % 2 == 0)
        .map_values(lambda v: f"even-{v}")
        .to(sink, Produced.with_(Serdes.String(), Serdes.String()))
    )
    produce(bootstrap_servers, source, ((f"k{i % 7}".encode(), str(i).encode()) for i in range(1000)))
    states = []
    streams = KafkaStreams(builder.build(), streams_config(bootstrap_servers, app, tmp_path))
    streams.set_state_listener(lambda new, old: states.append(new))
    streams.start()
    try:
        wait_running(streams)
        out = read_all(bootstrap_servers, sink, 2, 500)
    finally:
        assert streams.close(timeout=20)
    assert sorted(int(m.value().decode()[5:]) for m in out) == list(range(0, 1000, 2))
    assert states[0] is KafkaStreamsState.REBALANCING and KafkaStreamsState.RUNNING in states
    assert states[-1] is KafkaStreamsState.NOT_RUNNING


def test_should_resume_from_committed_offsets_after_a_clean_restart(bootstrap_servers, unique_name, tmp_path):
    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 3, sink: 1})

    def topology():
        builder = StreamsBuilder()
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).to(
            sink, Produced.with_(Serdes.String(), Serdes.String())
        )
        return builder.build()

    for run in range(2):
        produce(bootstrap_servers, source, ((f"k{i}".encode(), f"{run}-{i}".encode()) for i in range(300)))
        with KafkaStreams(topology(), streams_config(bootstrap_servers, app, tmp_path)) as streams:
            streams.start()
            wait_running(streams)
            out = read_all(bootstrap_servers, sink, 1, 300 * (run + 1))
    out = read_all(bootstrap_servers, sink, 1, 601, timeout=1.0)
    values = sorted(m.value().decode() for m in out)
    assert values == sorted(f"{r}-{i}" for r in range(2) for i in range(300))  # nothing twice, nothing lost


def test_should_spread_tasks_over_added_threads_and_take_them_back_when_one_is_removed(
    bootstrap_servers, unique_name, tmp_path
):
    from tests.integration.streams_support import active_task_counts, wait_until

    source, sink, app = unique_name("in"), unique_name("out"), unique_name("app")
    make_topics(bootstrap_servers, **{source: 4, sink: 4})
    builder = StreamsBuilder()
    builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).to(
        sink, Produced.with_(Serdes.String(), Serdes.String())
    )
    with KafkaStreams(builder.build(), streams_config(bootstrap_servers, app, tmp_path)) as streams:
        streams.start()
        wait_running(streams)
        assert active_task_counts(streams) == [4]
        added = streams.add_stream_thread()
        assert added is not None and added.endswith("StreamThread-2")
        wait_until(
            lambda: active_task_counts(streams) == [2, 2],
            30,
            lambda: f"[2, 2], have {active_task_counts(streams)}",
        )
        assert streams.remove_stream_thread(timeout=20) == added
        wait_until(
            lambda: active_task_counts(streams) == [4], 30, lambda: f"[4], have {active_task_counts(streams)}"
        )
        produce(bootstrap_servers, source, ((f"k{i}".encode(), str(i).encode()) for i in range(200)))
        out = read_all(bootstrap_servers, sink, 4, 200)
        assert [t.thread_name for t in streams.metadata_for_local_threads()][0].endswith("StreamThread-1")
    assert sorted(int(m.value()) for m in out) == list(range(200))
