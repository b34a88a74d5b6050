"""Interactive queries across 3 instances through every instance's HTTP endpoint.

One scenario per module: three KafkaStreams clients (distinct state dirs and application_server
ports, a token) count integer keys of a 6-partition topic. Every key is asked of every instance
(answered locally or forwarded to its owner), before and after one instance leaves and after a
new one joins with empty state (restoring); while they leave and join, a querier keeps asking
and every answer must be the right count or the clear 503 "migrating / owner unreachable"
error, never a wrong value or a missing key. Malformed keys and
unknown stores get 4xx with a JSON body; no token gets 401; /health stays open.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass, field

import httpx
import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Serdes, StreamsBuilder
from streams_runtime.kafka.partitioner import partition_for
from tests.integration.streams_support import (
    active_task_counts,
    make_topics,
    produce,
    streams_config,
    wait_running,
    wait_until,
)
from tests.ports import free_port

# on Apache Kafka and on the embedded Tansu in every `make test` (tests/conftest.py)
pytestmark = pytest.mark.every_broker

PARTITIONS = 6
KEYS = 90
TOKEN = "iq-secret"
SECRET = "iq-forwarding-secret-of-at-least-32-bytes"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CLEAR_ERRORS = {"store_migrating", "owner_unreachable", "not_running"}


def _expected() -> dict[int, int]:
    return {k: k % 4 + 1 for k in range(KEYS)}


def _count(body: dict) -> int:
    value = body["value"]
    return value["value"] if isinstance(value, dict) else value


@dataclass
class Scenario:
    ports: list[int] = field(default_factory=list)
    before: dict = field(default_factory=dict)  # (instance, key) -> (status, body)
    during: list = field(default_factory=list)  # (status, body, key)
    after: dict = field(default_factory=dict)
    stale: dict = field(default_factory=dict)
    after_join: dict = field(default_factory=dict)
    metadata_partitions: dict = field(default_factory=dict)
    bad_key: tuple = ()
    unknown_store: tuple = ()
    wrong_type: tuple = ()
    no_token: int = 0
    bad_token: int = 0
    health_no_token: int = 0
    ready: int = 0
    local_view: dict = field(default_factory=dict)
    local_errors: list = field(default_factory=list)
    scans: list = field(default_factory=list)
    openapi_paths: list = field(default_factory=list)


def _ask_all(client: httpx.Client, ports: list[int], allow_stale: bool = False) -> dict:
    answers = {}
    params = {"allow_stale": "true"} if allow_stale else {}
    for port in ports:
        for key in range(KEYS):
            r = client.get(f"http://127.0.0.1:{port}/stores/counts/keys/{key}", headers=AUTH, params=params)
            answers[(port, key)] = (r.status_code, r.json())
    return answers


def _standbys_answer(answers: dict) -> bool:
    """Every key answered right by 2 instances themselves (active + standby, one stale) and
    forwarded by the third."""
    if not _all_right(answers):
        return False
    for key in range(KEYS):
        own = [b for (port, k), (_, b) in answers.items() if k == key and b["host"] == f"127.0.0.1:{port}"]
        if len(own) != 2 or sorted(b["stale"] for b in own) != [False, True]:
            return False
    return True


def _all_right(answers: dict) -> bool:
    expected = _expected()
    return all(s == 200 and _count(b) == expected[k] for (_, k), (s, b) in answers.items())


def _standby_counts(c):
    return [len(t.standby_tasks) for t in c.metadata_for_local_threads()]


@pytest.fixture(scope="module")
def scenario(kafka_broker, tmp_path_factory) -> Scenario:
    bootstrap = kafka_broker
    suffix = tmp_path_factory.mktemp("iq").name
    source, app = f"iq-in-{suffix}", f"iq-app-{suffix}"
    make_topics(bootstrap, **{source: PARTITIONS})
    produce(bootstrap, source, ((struct.pack(">i", k), b"v") for k in range(KEYS) for _ in range(k % 4 + 1)))

    def topology():
        builder = StreamsBuilder()
        builder.stream(source, Consumed.with_(Serdes.Integer(), Serdes.String())).group_by_key().count(
            Materialized.as_("counts")
        )
        return builder.build()

    result = Scenario(ports=[free_port() for _ in range(3)])
    clients = [
        KafkaStreams(
            topology(),
            streams_config(
                bootstrap,
                app,
                tmp_path_factory.mktemp(f"iq{i}"),
                application_server=f"127.0.0.1:{port}",
                application_server_token=TOKEN,
                application_server_forwarding_secret=SECRET,
                num_standby_replicas=1,
            ),
        )
        for i, port in enumerate(result.ports)
    ]
    http = httpx.Client(timeout=15)
    try:
        for c in clients:
            c.start()
        wait_running(*clients, timeout=60)
        # a settled assignment first: 2 active tasks per instance, every standby caught up
        wait_until(
            lambda: all(c.state.name == "RUNNING" and sum(active_task_counts(c)) == 2 for c in clients),
            30,  # the first assignment is balanced (new instances count as caught up): seconds
            lambda: "2 active tasks on each instance: "
            + str([(c.state.name, active_task_counts(c), _standby_counts(c)) for c in clients]),
        )
        wait_until(
            lambda: _standbys_answer(_ask_all(http, result.ports, allow_stale=True)),
            45,
            "every key counted, standby replicas answering stale reads",
        )
        result.stale = _ask_all(http, result.ports, allow_stale=True)
        result.before = _ask_all(http, result.ports)
        base = f"http://127.0.0.1:{result.ports[0]}"
        for key in range(KEYS):
            result.metadata_partitions[key] = http.get(f"{base}/metadata/counts/{key}", headers=AUTH).json()
        r = http.get(f"{base}/stores/counts/keys/abc", headers=AUTH)
        result.bad_key = (r.status_code, r.json())
        r = http.get(f"{base}/stores/no-such-store/keys/1", headers=AUTH)
        result.unknown_store = (r.status_code, r.json())
        r = http.get(f"{base}/stores/counts/windows/1", headers=AUTH)
        result.wrong_type = (r.status_code, r.json())
        result.no_token = http.get(f"{base}/stores/counts/keys/1").status_code
        result.bad_token = http.get(
            f"{base}/stores/counts/keys/1", headers={"Authorization": "Bearer no"}
        ).status_code
        result.health_no_token = http.get(f"{base}/health/live").status_code
        result.ready = http.get(f"{base}/health/ready").status_code
        result.openapi_paths = sorted(http.get(f"{base}/openapi.json", headers=AUTH).json()["paths"])
        for port in result.ports:  # local scans: each instance answers for its own partitions only
            result.scans.append(http.get(f"http://127.0.0.1:{port}/stores/counts/all", headers=AUTH).json())
        # the Python API: local keys answer, others raise the clear error
        view = clients[0].store("counts")
        for key in range(KEYS):
            try:
                result.local_view[key] = view.get(key).value
            except Exception as exc:  # noqa: BLE001 - the test records the kind of error
                result.local_errors.append((key, type(exc).__name__, str(exc)))

        # the third instance leaves while a querier keeps asking the two others
        stop = threading.Event()

        def querier() -> None:
            with httpx.Client(timeout=15) as q:
                while not stop.is_set():
                    for key in range(0, KEYS, 3):
                        port = result.ports[key % 2]
                        r = q.get(f"http://127.0.0.1:{port}/stores/counts/keys/{key}", headers=AUTH)
                        result.during.append((r.status_code, r.json(), key))

        asker = threading.Thread(target=querier, daemon=True)
        asker.start()
        leaving = clients.pop()
        assert leaving.close(timeout=30)
        wait_running(*clients, timeout=60)
        wait_until(
            lambda: _all_right(_ask_all(http, result.ports[:2])), 45, "every key answered after the leave"
        )
        result.after = _ask_all(http, result.ports[:2])
        # a new instance joins with empty state (its tasks restore from the changelogs), still queried
        result.ports.append(free_port())
        clients.append(
            KafkaStreams(
                topology(),
                streams_config(
                    bootstrap,
                    app,
                    tmp_path_factory.mktemp("iq3"),
                    application_server=f"127.0.0.1:{result.ports[-1]}",
                    application_server_token=TOKEN,
                    application_server_forwarding_secret=SECRET,
                    num_standby_replicas=1,
                ),
            )
        )
        clients[-1].start()
        wait_running(*clients, timeout=60)
        wait_until(
            lambda: _all_right(_ask_all(http, result.ports[:2] + result.ports[3:])),
            45,
            "every key answered through every instance after the join",
        )
        stop.set()
        asker.join(30)
        result.after_join = _ask_all(http, result.ports[:2] + result.ports[3:])
    finally:
        http.close()
        for c in clients:
            c.close(timeout=30)
    return result


def test_should_answer_every_key_through_every_instance(scenario):
    expected = _expected()
    wrong = {k: (s, b) for k, (s, b) in scenario.before.items() if s != 200 or _count(b) != expected[k[1]]}
    assert not wrong
    assert len(scenario.before) == 3 * KEYS


def test_should_let_a_local_standby_answer_when_stale_reads_are_allowed(scenario):
    assert _standbys_answer(scenario.stale)


def test_should_give_the_partition_kafka_default_partitioner_gives(scenario):
    for key, meta in scenario.metadata_partitions.items():
        assert meta["partition"] == partition_for(struct.pack(">i", key), PARTITIONS)
        assert meta["active_host"] in {f"127.0.0.1:{p}" for p in scenario.ports[:3]}
    answered_by = {b["host"] for (_, _), (_, b) in scenario.before.items()}
    assert answered_by == {f"127.0.0.1:{p}" for p in scenario.ports[:3]}  # forwarding reached every owner


def test_should_answer_only_local_keys_in_the_python_api_and_raise_clearly_for_the_others(scenario):
    expected = _expected()
    assert scenario.local_view and scenario.local_errors  # 6 partitions over 3 instances
    assert all(v == expected[k] for k, v in scenario.local_view.items())
    for _key, kind, message in scenario.local_errors:
        assert kind == "InvalidStateStorePartitionError"
        assert "is not hosted on this instance" in message
    assert len(scenario.local_view) + len(scenario.local_errors) == KEYS


def test_should_scan_each_instance_local_partitions_without_overlap(scenario):
    keys = [e["key"] for scan in scenario.scans for e in scan["entries"]]
    assert sorted(keys) == list(range(KEYS))
    assert sorted(p for scan in scenario.scans for p in scan["partitions"]) == list(range(PARTITIONS))


def test_should_answer_right_or_with_the_clear_error_while_an_instance_leaves(scenario):
    expected = _expected()
    assert scenario.during
    for status, body, key in scenario.during:
        if status == 200:
            assert _count(body) == expected[key], body
        else:
            assert status == 503, (status, body)
            assert body["error"] in CLEAR_ERRORS and body["message"], body


def test_should_answer_every_key_after_the_rebalance(scenario):
    expected = _expected()
    assert all(s == 200 and _count(b) == expected[k] for (_, k), (s, b) in scenario.after.items())
    assert {b["host"] for (_, _), (_, b) in scenario.after.items()} == {
        f"127.0.0.1:{p}" for p in scenario.ports[:2]
    }


def test_should_answer_every_key_through_every_instance_after_an_instance_joins(scenario):
    expected = _expected()
    assert len(scenario.after_join) == 3 * KEYS
    assert all(s == 200 and _count(b) == expected[k] for (_, k), (s, b) in scenario.after_join.items())
    # the newcomer answers through its own endpoint (forwarding what it does not own: with empty
    # state it may get only warm-ups until a probing rebalance moves tasks to it)
    asked_newcomer = {k for (port, k) in scenario.after_join if port == scenario.ports[3]}
    assert asked_newcomer == set(range(KEYS))


def test_should_reject_malformed_keys_and_unknown_stores_with_a_clear_4xx(scenario):
    status, body = scenario.bad_key
    assert status == 400 and body["error"] == "malformed_key" and "Serdes.Integer" in body["message"]
    status, body = scenario.unknown_store
    assert status == 404 and body["error"] == "unknown_store" and "no-such-store" in body["message"]
    status, body = scenario.wrong_type
    assert status == 409 and body["error"] == "wrong_store_type"


def test_should_require_the_token_except_for_health(scenario):
    assert scenario.no_token == 401
    assert scenario.bad_token == 401
    assert scenario.health_no_token == 200
    assert scenario.ready == 200


def test_should_document_the_routes_in_openapi(scenario):
    for path in (
        "/stores",
        "/stores/{store}/keys/{key}",
        "/stores/{store}/range",
        "/stores/{store}/all",
        "/stores/{store}/windows/{key}",
        "/metadata/{store}/{key}",
        "/metrics",
        "/health/ready",
    ):
        assert path in scenario.openapi_paths
