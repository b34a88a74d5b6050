"""The ``streams-runtime`` command.

    streams-runtime broker start [--kind tansu|kafka] [--nodes 1|3] [--host ADDRESS] | stop | status
                                               a local broker: embedded Tansu, or Apache Kafka
                                               (state in .streams-runtime/)
    streams-runtime demo [--broker tansu|kafka] [--keep-running] [--with-airflow [--airflow-port P]]
                                               the main job: broker, 2 workers, producer, live results
                                               (and Airflow standalone + the provisioning DAG)
    streams-runtime topics create NAME [NAME ...] --partitions N [--replication-factor R]
                           [--config KEY=VALUE ...] [--if-not-exists]
                         | list | describe NAME [NAME ...]
                                               create, list and describe topics
    streams-runtime produce TOPIC [--file PATH|-] [--key-serde S] [--value-serde S]
                                               send JSON lines {"key", "value", "timestamp",
                                               "headers"}, placed by murmur2 as Kafka Streams expects
    streams-runtime consume TOPIC [--follow] [--max-records N] [--read-uncommitted]
                                               print records as JSON lines (committed only by default)
    streams-runtime worker --app module:attr [--instances N] [--threads M]
                                               run a topology as N processes x M stream threads
    streams-runtime describe --app module:attr [--format text|svg|dot|mermaid]
                                               print the topology (text or a picture)
    streams-runtime status --app-id X          members, tasks per instance, lag per partition
    streams-runtime reset --app-id X --input-topics T,...
                                               the application reset tool (see --help)

Getting started, with nothing but this package::

    streams-runtime broker start
    streams-runtime topics create orders --partitions 3
    echo '{"key": "user-1", "value": {"amount": 12.5}}' | streams-runtime produce orders
    streams-runtime consume orders

Kafka, for every command that needs it (:mod:`streams_runtime.brokers.bootstrap`):
``--bootstrap-servers``, else ``$BOOTSTRAP_SERVERS``, else the broker ``broker start`` recorded in
the project's home (``$STREAMS_RUNTIME_HOME``, else the nearest ``.streams-runtime/`` above the
current directory, else the checkout the package runs from). With none, ``worker`` and ``demo``
warn and start a throwaway broker for their own lifetime; ``topics``, ``produce``, ``consume``,
``status`` and ``reset`` stop and say how to give one (what they write would vanish with a
throwaway broker, and it holds no application to look at).

Exit codes: 0 success, 1 a clear error was printed, 2 bad usage. A Kafka that does not answer
within ``--connect-timeout`` seconds ends the command with one line, "cannot reach Kafka at
host:port after N s: <reason>"; librdkafka's own log lines go through Python logging (shown from
WARNING up, everything with -v).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from streams_runtime.brokers import (
    BROKER_KINDS,
    BrokerInfo,
    default_state_file,
    local_broker,
    pid_alive,
    rss_bytes,
    runtime_home,
)
from streams_runtime.brokers.apache_kafka import stop_recorded
from streams_runtime.brokers.bootstrap import FLAG_DEFAULT
from streams_runtime.errors import StreamsError
from streams_runtime.tools import consume, describe, produce, reset, status, topics


def _broker_start(args: argparse.Namespace) -> int:
    import time

    state_file = default_state_file()
    info = BrokerInfo.read(state_file)
    if info and pid_alive(info.pid):
        print(
            f"error: a {info.kind} broker is already running at {info.bootstrap_servers} (pid {info.pid}); "
            "run 'streams-runtime broker stop' first",
            file=sys.stderr,
        )
        return 1
    options: dict[str, object] = {"state_file": state_file}
    if args.host is not None and args.kind != "kafka":
        print(
            "error: --host is for --kind kafka (the embedded broker listens on loopback only)",
            file=sys.stderr,
        )
        return 2
    if args.override and args.kind != "kafka":
        print("error: --override is for --kind kafka (server.properties settings)", file=sys.stderr)
        return 2
    overrides: dict[str, str] = {}
    for item in args.override:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            print(
                f"error: --override {item!r}: expected KEY=VALUE, e.g. min.insync.replicas=2", file=sys.stderr
            )
            return 2
        overrides[key.strip()] = value.strip()
    if args.kind == "kafka":
        options["data_dir"] = runtime_home() / "kafka"
        if args.host is not None:
            options["host"] = args.host
        if overrides:
            options["overrides"] = overrides
    else:
        options["port"] = args.port
    broker = local_broker(args.kind, nodes=args.nodes, **options)
    began = time.monotonic()
    info = broker.start()  # the processes outlive this command: they run in their own sessions
    seconds = time.monotonic() - began
    rss = sum(rss_bytes(pid) or 0 for pid in info.all_pids)
    pids = info.all_pids
    nodes = f"pid {pids[0]}" if len(pids) == 1 else f"{len(pids)} nodes, pids {', '.join(map(str, pids))}"
    print(f"{args.kind} broker running at {info.bootstrap_servers} ({nodes})")
    print(f"started in {seconds:.1f} s; resident memory {rss / 2**20:.0f} MiB; log: {info.log_file}")
    print(f"state: {state_file}")
    print(info.bootstrap_servers)
    return 0


def _broker_stop(args: argparse.Namespace) -> int:
    state_file = default_state_file()
    info = BrokerInfo.read(state_file)
    if info is None:
        print("no local broker recorded; nothing to stop")
        return 0
    gone = stop_recorded(info)
    state_file.unlink(missing_ok=True)
    if not gone:
        print(f"error: broker pid(s) {info.all_pids} did not exit", file=sys.stderr)
        return 1
    print(f"{info.kind} broker at {info.bootstrap_servers} (pids {info.all_pids}) stopped")
    return 0


def _broker_status(args: argparse.Namespace) -> int:
    from streams_runtime.kafka.clients import wait_for_metadata

    info = BrokerInfo.read(default_state_file())
    if info is None or not pid_alive(info.pid):
        print("broker: not running")
        return 1
    try:
        brokers = wait_for_metadata(info.bootstrap_servers, timeout=3)
    except TimeoutError:
        print(f"broker: pid {info.pid} alive but {info.bootstrap_servers} does not answer")
        return 1
    print(
        f"broker: {info.kind} running at {info.bootstrap_servers} "
        f"(pids {info.all_pids}, {brokers} broker(s)); log: {info.log_file}"
    )
    return 0


def _demo(args: argparse.Namespace) -> int:
    from streams_runtime.demo import run_demo

    return run_demo(
        bootstrap_servers=args.bootstrap_servers,
        records=args.records,
        keep_running=args.keep_running,
        instances=args.instances,
        threads=args.threads,
        timeout=args.timeout,
        with_airflow=args.with_airflow,
        airflow_port=args.airflow_port,
        broker=args.broker,
        connect_timeout=args.connect_timeout,
    )


def _worker(args: argparse.Namespace) -> int:
    from streams_runtime.worker import run_worker

    return run_worker(
        args.app,
        instances=args.instances,
        threads=args.threads,
        bootstrap_servers=args.bootstrap_servers,
        state_dir=args.state_dir,
        verbose=args.verbose,
        http_port=args.http_port,
        http_host=args.http_host,
        http_bind=args.http_bind,
        connect_timeout=args.connect_timeout,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="streams-runtime", description=__doc__.split("\n")[0])
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="debug logging (librdkafka's too; else from WARNING)"
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        help="seconds to wait for Kafka to answer before giving up (default 10)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    broker = commands.add_parser("broker", help="manage a local broker (embedded Tansu or Apache Kafka)")
    actions = broker.add_subparsers(dest="action", required=True)
    start = actions.add_parser("start", help="start it in the background (on loopback ports unless --host)")
    start.add_argument(
        "--kind",
        choices=BROKER_KINDS,
        default="tansu",
        help="tansu: the embedded broker (no Java); kafka: Apache Kafka 4.3.1 in KRaft mode (default tansu)",
    )
    start.add_argument(
        "--nodes",
        type=int,
        choices=(1, 3),
        default=1,
        help="kafka only: 1 combined broker+controller, or 3 (replication factor 3, min ISR 2)",
    )
    start.add_argument("--port", type=int, default=None, help="tansu only: fixed port (default: a free one)")
    start.add_argument(
        "--host",
        default=None,
        help="kafka only: listen on and advertise this address of the machine instead of 127.0.0.1, "
        "for clients and workers on other hosts (an address they reach, not 0.0.0.0)",
    )
    start.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="kafka only: a server.properties setting of every node, as kafka-server-start.sh's "
        "--override (repeatable; e.g. --override min.insync.replicas=2)",
    )
    start.set_defaults(func=_broker_start)
    actions.add_parser("stop", help="stop it by PID").set_defaults(func=_broker_stop)
    actions.add_parser("status", help="is it running and answering?").set_defaults(func=_broker_status)

    demo = commands.add_parser("demo", help="run the main job on the embedded default")
    demo.add_argument(
        "--bootstrap-servers",
        default=None,
        help=f"use this cluster (default: {FLAG_DEFAULT}; else a throwaway one, with a warning)",
    )
    demo.add_argument(
        "--broker",
        choices=BROKER_KINDS,
        default="tansu",
        help="broker started when none is configured: tansu (embedded, default) or kafka (Apache Kafka)",
    )
    demo.add_argument("--records", type=int, default=1000, help="demo records to produce (default 1000)")
    demo.add_argument("--keep-running", action="store_true", help="keep producing until Ctrl-C")
    demo.add_argument("--instances", type=int, default=2, help="worker instances (default 2)")
    demo.add_argument("--threads", type=int, default=2, help="stream threads per instance (default 2)")
    demo.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for results (default 90)")
    demo.add_argument(
        "--with-airflow",
        action="store_true",
        help="also start `airflow standalone` on loopback and run the provisioning DAG",
    )
    demo.add_argument(
        "--airflow-port", type=int, default=None, help="Airflow API/UI port (default: a free one)"
    )
    demo.set_defaults(func=_demo)

    worker = commands.add_parser("worker", help="run a topology as N instances x M stream threads")
    worker.add_argument("--app", required=True, help="module:attr of a function returning (Topology, config)")
    worker.add_argument("--instances", type=int, default=1, help="worker processes (default 1)")
    worker.add_argument("--threads", type=int, default=1, help="stream threads per instance (default 1)")
    worker.add_argument(
        "--bootstrap-servers",
        default=None,
        help=f"use this cluster (default: the app's bootstrap_servers, else {FLAG_DEFAULT}; else a "
        "throwaway one, with a warning)",
    )
    worker.add_argument("--state-dir", default=None, help="state root; instance i uses <dir>/instance-<i>")
    worker.add_argument(
        "--http-port",
        type=int,
        default=None,
        help="serve the HTTP API (interactive queries, /metrics, /health): instance i "
        "on port HTTP_PORT+i (sets application_server; binds "
        "application_server_bind, --http-host or loopback by default; the bearer token "
        "comes from $STREAMS_RUNTIME_HTTP_TOKEN when set, and the secret signing lookups "
        "forwarded between instances from $STREAMS_RUNTIME_FORWARDING_SECRET: without it, "
        "a key another instance owns is answered 409 naming that instance)",
    )
    worker.add_argument(
        "--http-host",
        default=None,
        help="host advertised in application_server, which other instances forward "
        "to (default: the app's, else 127.0.0.1); also bound when neither --http-bind nor the app "
        "names a bind address",
    )
    worker.add_argument(
        "--http-bind",
        default=None,
        help="address the HTTP API binds (application_server_bind), e.g. 0.0.0.0 "
        "in a container (default: the app's, else --http-host when given, else 127.0.0.1)",
    )
    worker.set_defaults(func=_worker)
    for tool in (topics, produce, consume, describe, status, reset):
        tool.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        status: int = args.func(args)
        return status
    except StreamsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # the reader of our output went away (`... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())
