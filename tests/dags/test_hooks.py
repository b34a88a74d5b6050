"""KafkaAdminHook (Connection -> clients) and StreamsWorkerHook (JSON over HTTP with clear errors)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml


def set_conn(monkeypatch, conn_id: str, conn: dict) -> str:
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(conn))
    return conn_id


@pytest.mark.parametrize(
    ("conn", "expected"),
    [
        ({"conn_type": "kafka", "extra": {"bootstrap_servers": "a:1,b:2"}}, "a:1,b:2"),
        ({"conn_type": "kafka", "extra": {"bootstrap.servers": "c:3"}}, "c:3"),
        ({"conn_type": "kafka", "host": "kafka.local", "port": 9092}, "kafka.local:9092"),
    ],
    ids=["extra", "provider-style-extra", "host-port"],
)
def test_kafka_hook_reads_the_bootstrap_servers_from_the_connection(monkeypatch, conn, expected) -> None:
    from streams_ops.hooks.kafka_admin import KafkaAdminHook

    assert KafkaAdminHook(set_conn(monkeypatch, "k1", conn)).bootstrap_servers == expected


def test_compose_defines_the_connection_the_kafka_hook_uses_by_default() -> None:
    """docker-compose.yml's Airflow scheduler has the Connection ``KafkaAdminHook`` looks up when
    a DAG names none (here, not in tests/deploy: importing a hook imports Airflow, which only
    tests/dags configures)."""
    from streams_ops.hooks.kafka_admin import KafkaAdminHook

    from tests.deploy.compose_files import COMPOSE  # the file with deploy/stack.env's values

    env = COMPOSE["services"]["airflow-scheduler"]["environment"]
    assert f"AIRFLOW_CONN_{KafkaAdminHook.default_conn_name.upper()}" in env


def test_compose_gives_airflow_the_workers_address_and_token() -> None:
    """docker-compose.yml's Airflow scheduler reaches the stream workers through the Connection
    ``StreamsWorkerHook`` uses by default, with the workers' own HTTP port and token."""
    from streams_ops.hooks.streams_worker import StreamsWorkerHook

    from streams_runtime.worker import HTTP_TOKEN_ENV
    from tests.deploy.compose_files import COMPOSE  # the file with deploy/stack.env's values

    services = COMPOSE["services"]
    env = services["airflow-scheduler"]["environment"]
    conn = yaml.safe_load(env[f"AIRFLOW_CONN_{StreamsWorkerHook.default_conn_name.upper()}"])
    worker_args = services["stream-worker"]["command"][-1].split()
    assert conn["host"] == "stream-worker"
    assert conn["port"] == int(worker_args[worker_args.index("--http-port") + 1])
    assert conn["password"] == services["stream-worker"]["environment"][HTTP_TOKEN_ENV]


def test_kafka_hook_says_what_is_missing(monkeypatch) -> None:
    from streams_ops.hooks.kafka_admin import KafkaAdminHook, KafkaConnectionError

    hook = KafkaAdminHook(set_conn(monkeypatch, "k2", {"conn_type": "kafka"}))
    with pytest.raises(KafkaConnectionError, match="'k2' names no Kafka cluster"):
        _ = hook.bootstrap_servers


@pytest.mark.kafka
@pytest.mark.every_broker
def test_kafka_hook_builds_clients_with_the_profile_and_knows_the_embedded_broker(
    kafka_conn, broker_kind
) -> None:
    from streams_ops.hooks.kafka_admin import KafkaAdminHook

    hook = KafkaAdminHook(kafka_conn)
    assert hook.is_embedded_broker() is (broker_kind == "tansu")
    ok, message = hook.test_connection()
    assert ok and "1 broker(s)" in message
    consumer = hook.get_consumer("hook-test")
    consumer.close()


# ---- StreamsWorkerHook -------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out first
            pass

    def do_GET(self) -> None:
        if self.path.startswith("/state"):
            self._send(200, json.dumps({"state": "RUNNING", "path": self.path}).encode())
        elif self.path == "/slow":
            time.sleep(1.0)
            self._send(200, b"{}")
        elif self.path == "/html":
            self._send(200, b"<html>no</html>", "text/html")
        else:
            self._send(500, b'{"error": "store not found"}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self._send(200, json.dumps({"echo": json.loads(body)}).encode())


@pytest.fixture
def worker(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    set_conn(monkeypatch, "w1", {"conn_type": "http", "host": "127.0.0.1", "port": server.server_port})
    yield server.server_port
    server.shutdown()
    server.server_close()


def test_worker_hook_gets_and_posts_json(worker) -> None:
    from streams_ops.hooks.streams_worker import StreamsWorkerHook

    hook = StreamsWorkerHook("w1", timeout=0.5)
    assert hook.base_url == f"http://127.0.0.1:{worker}"
    assert hook.get_json("/state", {"store": "counts"}) == {"state": "RUNNING", "path": "/state?store=counts"}
    assert hook.post_json("tasks/0_1/pause", {"wipe": True}) == {"echo": {"wipe": True}}


def test_worker_hook_errors_name_the_call_and_the_cause(worker) -> None:
    from streams_ops.hooks.streams_worker import StreamsWorkerError, StreamsWorkerHook

    hook = StreamsWorkerHook("w1", timeout=0.3)
    with pytest.raises(StreamsWorkerError, match=r"GET .*/missing -> HTTP 500: .*store not found") as error:
        hook.get_json("missing")
    assert error.value.status == 500
    with pytest.raises(StreamsWorkerError, match=r"GET .*/slow timed out after 0.3s"):
        hook.get_json("slow")
    with pytest.raises(StreamsWorkerError, match="not JSON"):
        hook.get_json("html")


def test_worker_hook_reports_a_refused_connection_and_a_missing_host(monkeypatch) -> None:
    from streams_ops.hooks.streams_worker import StreamsWorkerError, StreamsWorkerHook

    set_conn(monkeypatch, "w2", {"conn_type": "http", "extra": {"base_url": "http://127.0.0.1:9/api/"}})
    hook = StreamsWorkerHook("w2", timeout=0.5)
    assert hook.base_url == "http://127.0.0.1:9/api"
    with pytest.raises(StreamsWorkerError, match=r"GET http://127.0.0.1:9/api/state failed: .*refused"):
        hook.get_json("state")
    set_conn(monkeypatch, "w3", {"conn_type": "http"})
    with pytest.raises(StreamsWorkerError, match="no host and no extra 'base_url'"):
        StreamsWorkerHook("w3").get_json("x")


def test_spark_hook_reads_the_master_from_the_connection_and_defaults_to_local(monkeypatch) -> None:
    """host + port, a whole URL in host (compose's form), local[N]; no connection: local[*]; a
    value Spark would not take names the connection, the key and the allowed values."""
    import json

    from streams_ops.hooks.spark import SparkConnectionError, SparkMasterHook

    def master(conn: dict | None) -> str:
        if conn is None:
            monkeypatch.delenv("AIRFLOW_CONN_STREAMS_SPARK", raising=False)
        else:
            monkeypatch.setenv("AIRFLOW_CONN_STREAMS_SPARK", json.dumps({"conn_type": "spark", **conn}))
        return SparkMasterHook().master

    assert master(None) == "local[*]"
    assert master({"host": "spark://127.0.0.1", "port": 7077}) == "spark://127.0.0.1:7077"
    assert master({"host": "spark://spark-master:7077"}) == "spark://spark-master:7077"
    assert master({"host": "local[2]"}) == "local[2]"
    for bad in ({"host": "yarn"}, {"host": "spark://127.0.0.1"}, {"host": "127.0.0.1", "port": 7077}):
        with pytest.raises(SparkConnectionError, match=r"'streams_spark'.*'host'.*spark://HOST:PORT"):
            master(bad)
