"""A forged owner in the group gets neither the token nor a say: its answers are never relayed.

Three KafkaStreams clients of one application on the embedded broker count string keys of a
6-partition topic. A and B are legitimate: a bearer token for clients, and the shared
forwarding secret. M is a group member run by an attacker who has Kafka access but neither the
token nor the secret: its client binds its own HTTP server on 127.0.0.1 but advertises
127.0.0.2 on the same port, where the attacker's listener records every request it gets and
answers ``"value": 999999`` with a made-up response signature. Every key is asked of A and B
with the token. Keys M owns must be refused (502 ``owner_not_verified``, nothing of the forged
body relayed), the listener must have been asked (the attack was really tried) and none of the
bytes it received may hold the token; keys A and B own answer right. Replaying a captured
forwarded request to a legitimate instance is refused (401).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import httpx
import pytest

from streams_runtime import Consumed, KafkaStreams, Materialized, Serdes, StreamsBuilder
from tests.integration.streams_support import (
    active_task_counts,
    make_topics,
    produce,
    streams_config,
    wait_running,
    wait_until,
)
from tests.ports import free_port

PARTITIONS = 6
KEYS = [f"user/{i}?x#{i}" for i in range(48)]
TOKEN = "client-token-the-attacker-wants"
SECRET = "instances-forwarding-secret-of-at-least-32-bytes"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
FORGED = 999999
#: sessions long enough that a loaded machine does not rebalance the group mid-test
STABLE = {"consumer.session.timeout.ms": 10_000, "consumer.heartbeat.interval.ms": 1_000}


def _expected() -> dict[str, int]:
    return {k: i % 4 + 1 for i, k in enumerate(KEYS)}


def _count(body: dict) -> int:
    value = body["value"]
    return value["value"] if isinstance(value, dict) else value


class ForgedOwner(ThreadingHTTPServer):
    """The attacker's listener: records every request whole, answers a forged value."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int]) -> None:
        self.captured: list[dict] = []
        super().__init__(address, _ForgedHandler)


class _ForgedHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server hook name
        self.server.captured.append(
            {
                "path": self.path,
                "headers": dict(self.headers.items()),
                "raw": str(self.headers) + self.requestline,
            }
        )
        body = json.dumps({"store": "counts", "key": "x", "value": FORGED, "stale": False}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Streams-Response-Signature", "v1=" + "ab" * 32)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@dataclass
class Attack:
    ports: dict[str, int] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)  # key -> advertised active host
    answers: dict = field(default_factory=dict)  # (instance, key) -> (status, body)
    captured: list = field(default_factory=list)  # what the listener got in the stable round
    everything_captured: list = field(default_factory=list)  # ... and in the whole test
    replays: list = field(default_factory=list)  # statuses of captured requests replayed to A and B


@pytest.fixture(scope="module")
def attack(kafka_broker, tmp_path_factory) -> Attack:
    bootstrap = kafka_broker
    suffix = tmp_path_factory.mktemp("fw").name
    source, app = f"fw-in-{suffix}", f"fw-app-{suffix}"
    make_topics(bootstrap, **{source: PARTITIONS})
    produce(bootstrap, source, ((k.encode(), b"v") for i, k in enumerate(KEYS) for _ in range(i % 4 + 1)))

    def topology():
        builder = StreamsBuilder()
        builder.stream(source, Consumed.with_(Serdes.String(), Serdes.String())).group_by_key().count(
            Materialized.as_("counts")
        )
        return builder.build()

    result = Attack(ports={"A": free_port(), "B": free_port()})
    attacker_port = free_port("127.0.0.2")
    listener = ForgedOwner(("127.0.0.2", attacker_port))
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    forged = f"127.0.0.2:{attacker_port}"
    legit = {"token": TOKEN, "forwarding_secret": SECRET}
    configs = [
        {"application_server": f"127.0.0.1:{result.ports['A']}", **legit},
        {"application_server": f"127.0.0.1:{result.ports['B']}", **legit},
        # the attacker: binds 127.0.0.1 (port free there), advertises the listener's address
        {"application_server": forged, "application_server_bind": "127.0.0.1"},
    ]
    clients = []
    for i, extra in enumerate(configs):
        token, secret = extra.pop("token", None), extra.pop("forwarding_secret", None)
        if token:
            extra |= {"application_server_token": token, "application_server_forwarding_secret": secret}
        clients.append(
            KafkaStreams(
                topology(),
                streams_config(bootstrap, app, tmp_path_factory.mktemp(f"fw{i}"), **STABLE, **extra),
            )
        )
    http = httpx.Client(timeout=15)
    try:
        for c in clients:
            c.start()
        wait_running(*clients, timeout=90)
        wait_until(
            lambda: all(c.state.name == "RUNNING" and sum(active_task_counts(c)) >= 1 for c in clients),
            90,
            "active tasks on each instance",
        )
        base = {name: f"http://127.0.0.1:{port}" for name, port in result.ports.items()}

        def owners() -> dict[str, str]:
            return {
                key: http.get(f"{base['A']}/metadata/counts/{quote(key, safe='')}", headers=AUTH).json()[
                    "active_host"
                ]
                for key in KEYS
            }

        def settled() -> bool:
            local = [k for k, owner in owners().items() if owner != forged]
            return all(
                http.get(f"{base[n]}/stores/counts/keys/{quote(k, safe='')}", headers=AUTH).status_code == 200
                for n in base
                for k in local
            )

        def stable_round() -> bool:
            """Every key asked of A and B, kept only when no task moved meanwhile (a follow-up
            rebalance moving a warmed-up task would change who is asked)."""
            before, asked_from = owners(), len(listener.captured)
            answers = {}
            for name, url in base.items():
                for key in KEYS:
                    r = http.get(f"{url}/stores/counts/keys/{quote(key, safe='')}", headers=AUTH)
                    answers[(name, key)] = (r.status_code, r.json())
            if owners() != before:
                return False
            result.owners, result.answers = before, answers
            result.captured = list(listener.captured[asked_from:])
            return True

        wait_until(settled, 90, "every key of A and B counted and answered")
        wait_until(stable_round, 90, "a round of lookups while no task moved")
        result.everything_captured = list(listener.captured)
        for request in result.captured[:4]:  # the attacker replays what it got to the real instances
            headers = {k: v for k, v in request["headers"].items() if k.lower().startswith("x-streams")}
            for url in base.values():
                result.replays.append(http.get(url + request["path"], headers=headers).status_code)
    finally:
        http.close()
        for c in clients:
            c.close(timeout=30)
        listener.shutdown()
        listener.server_close()
    return result


def test_should_have_given_the_forged_owner_partitions_and_asked_it(attack):
    forged_keys = [k for k, owner in attack.owners.items() if owner.startswith("127.0.0.2:")]
    assert forged_keys, attack.owners  # M owns some of the partitions
    # each of A and B forwarded M's keys to the advertised listener, once per lookup
    assert len(attack.captured) == 2 * len(forged_keys)
    assert len({c["headers"]["X-Streams-Nonce"] for c in attack.captured}) == len(attack.captured)


def test_should_never_send_the_client_token_to_the_forged_owner(attack):
    assert attack.everything_captured
    for request in attack.everything_captured:
        assert "authorization" not in {k.lower() for k in request["headers"]}
        assert TOKEN not in request["raw"] and TOKEN not in request["path"]
        assert request["headers"]["X-Streams-Signature"].startswith("v2=")


def test_should_never_relay_a_forged_answer(attack):
    for (instance, key), (status, body) in attack.answers.items():
        if attack.owners[key].startswith("127.0.0.2:"):
            assert status == 502, (instance, key, body)
            assert body["error"] == "owner_not_verified"
            assert str(FORGED) not in json.dumps(body)


def test_should_answer_the_keys_of_legitimate_owners_right(attack):
    expected = _expected()
    legit = [(i, k) for (i, k) in attack.answers if not attack.owners[k].startswith("127.0.0.2:")]
    assert legit
    for instance, key in legit:
        status, body = attack.answers[(instance, key)]
        assert status == 200 and body["key"] == key and _count(body) == expected[key], (instance, key, body)


def test_should_refuse_a_captured_forwarded_request_replayed_to_a_real_instance(attack):
    assert attack.replays and set(attack.replays) == {401}
