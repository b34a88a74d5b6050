"""Interactive queries of window and session stores, in Python and over HTTP (one instance).

Per-user counts in 10 s tumbling windows and in sessions (5 s gap) over records at t=60 s: the
window route answers a key's windows between two starts, the session route a key's sessions,
the local window scan every window, and a key-value route on a window store answers 409.
"""

from __future__ import annotations

import httpx

from streams_runtime import (
    Consumed,
    KafkaStreams,
    Materialized,
    Serdes,
    SessionWindows,
    StreamsBuilder,
    TimeWindows,
)
from tests.integration.streams_support import make_topics, produce, streams_config, wait_running, wait_until
from tests.ports import free_port

USERS = {f"u{k}": k + 1 for k in range(6)}
T = 60_000


def test_should_query_window_and_session_stores(kafka_broker, unique_name, tmp_path):
    source = unique_name("win-in")
    make_topics(kafka_broker, **{source: 2})
    produce(
        kafka_broker, source, ((u.encode(), b"x") for u, n in USERS.items() for _ in range(n)), timestamp=T
    )
    builder = StreamsBuilder()
    grouped = builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).group_by_key()
    grouped.windowed_by(TimeWindows.of_size_with_no_grace(10_000)).count(Materialized.as_("per-window"))
    grouped.windowed_by(SessionWindows.of_inactivity_gap_with_no_grace(5_000)).count(
        Materialized.as_("per-session")
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    streams = KafkaStreams(
        builder.build(),
        streams_config(
            kafka_broker, unique_name("win-app"), tmp_path, application_server=f"127.0.0.1:{port}"
        ),
    )
    streams.start()
    try:
        wait_running(streams, timeout=60)

        def counted() -> bool:
            r = httpx.get(f"{base}/stores/per-window/windows", params={"from": 0, "to": 10**6}, timeout=10)
            return (
                r.status_code == 200
                and len(r.json()["entries"]) == len(USERS)
                and all(e["value"]["value"] == USERS[e["key"]["key"]] for e in r.json()["entries"])
            )

        wait_until(counted, 45, "every user's window counted")
        for user, n in USERS.items():
            windows = httpx.get(
                f"{base}/stores/per-window/windows/{user}", params={"from": 0, "to": 10**6}
            ).json()
            assert windows["value"] == [{"start": T, "value": {"value": n, "timestamp": T}}]
            sessions = httpx.get(f"{base}/stores/per-session/keys/{user}").json()
            assert sessions["value"] == [{"start": T, "end": T, "value": n}]
            assert [kv.value.value for kv in streams.store("per-window").fetch(user, 0, 10**6)] == [n]
            assert streams.store("per-window").fetch(user, T).value == n
            assert [kv.value for kv in streams.store("per-session").find_sessions(user, 0, 10**6)] == [n]
        assert httpx.get(f"{base}/stores/per-window/windows/u1", params={"from": T + 1}).json()["value"] == []
        r = httpx.get(f"{base}/stores/per-window/all")
        assert r.status_code == 409 and r.json()["error"] == "wrong_store_type"
        # window bounds: the extremes of a 64-bit timestamp answer, anything beyond is a 422
        extremes = {"from": -(2**63), "to": 2**63 - 1}
        for path in (
            "/stores/per-window/windows/u1",
            "/stores/per-window/windows",
            "/stores/per-window/keys/u1",
        ):
            assert httpx.get(base + path, params=extremes).status_code == 200, path
            for bad in ({"from": -(2**63) - 1}, {"to": 2**63}, {"from": 10**30}, {"from": "soon"}):
                r = httpx.get(base + path, params=bad)
                assert r.status_code == 422 and r.json()["error"] == "invalid_request", (path, bad, r.text)
        r = httpx.get(f"{base}/metadata/no-such-store/u1")
        assert r.status_code == 404 and r.json()["error"] == "unknown_store"
        meta = httpx.get(f"{base}/metadata/per-window").json()
        (instance,) = meta["instances"]
        assert instance["partitions"] == [0, 1]
        assert instance["topic_partitions"] == [{"topic": source, "partition": p} for p in (0, 1)]
        assert {s["name"]: s["type"] for s in httpx.get(f"{base}/stores").json()["stores"]} == {
            "per-window": "window",
            "per-session": "session",
        }
    finally:
        streams.close(timeout=30)
