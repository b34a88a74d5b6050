"""Apache Kafka (KRaft) on loopback: one combined broker+controller, or a 3-node cluster.

On loopback by default; ``host`` puts every listener (clients, brokers among themselves,
controllers) on another address of this machine and advertises it, for clients on other hosts
(``streams-runtime broker start --kind kafka --host ADDRESS``; docs/how-to/several-hosts.md).

The reference broker of the test suite and the ``--kind kafka`` of ``streams-runtime broker
start``. It runs ``kafka.Kafka`` from the classpath that ``scripts/setup_kafka.sh`` resolved from
Maven Central (``jvm/apache-kafka/pom.xml``); nothing is downloaded here.

Lifecycle of :class:`ApacheKafkaCluster`::

    stopped --start()--> formatting --> starting --every node up--> running --stop()--> stopped
                                           |
                                           +--a node exits / no answer--> BrokerError (log tail)

Steps of :meth:`ApacheKafkaCluster.start`:
  1. find ``java`` and the classpath (``$STREAMS_RUNTIME_KAFKA_LIBS``, else the setup cache);
  2. pick three ports per node on its address, loopback or ``host`` (clients, brokers among
     themselves, controllers), and write each node's ``server.properties``: every node is
     broker and controller, the controllers form the quorum (``controller.quorum.voters``);
     with 3 nodes, replication factor 3 and ``min.insync.replicas=2`` are the defaults of
     every topic, internal ones included;
  3. format each node's log directory with one cluster id (``kafka.tools.StorageTool``);
  4. start every node in its own session, output appended to its log;
  5. wait until each node logs "Kafka Server started" and the cluster's metadata lists them all
     (a node that finds a port picked in step 2 taken meanwhile: steps 2-5 again on new ports);
  6. record kind, pids, address, logs and data directory in the state file, if one is given.

Settings that differ from a production broker, all for a local cluster that starts in seconds
and serves short test sessions: ``group.initial.rebalance.delay.ms=0``,
``group.min.session.timeout.ms=500`` (the test profile runs 2 s sessions), the log cleaner
looking for logs to compact every second instead of every 15 s (``log.cleaner.backoff.ms``), 8
partitions for the offsets and transaction-state topics instead of 50, auto-creation of topics
off (as the runtime expects everywhere), and time retention enforced once a day instead of 30 s
after the start and then every 5 minutes (``log.initial.task.delay.ms``,
``log.retention.check.interval.ms``). Tests stamp their records in 1970 so that windows are
deterministic; a retention check falling inside a test deletes every such record (decades past
``retention.ms``), and a reader starting at offset 0 then gets "offset out of range" and an empty
topic. The initial delay also defers the periodic recovery-point checkpoints to a clean shutdown:
a node killed with ``kill -9`` recovers its whole (small) log on restart. Nothing else is tuned:
transactions, fetch, replication and ListOffsets behave as on any Apache Kafka 4.3.1.
``overrides`` (``broker start --override KEY=VALUE``, as ``kafka-server-start.sh`` takes it) set any
other setting of every node's server.properties; the production-shaped stack passes deploy/stack.env's
``KAFKA_*`` values this way (scripts/stack.py).
"""

from __future__ import annotations

import base64
import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from streams_runtime.errors import BrokerError
from streams_runtime.kafka.local_processes import (
    HOST,
    BrokerInfo,
    free_port,
    log_tail,
    pid_alive,
    rss_bytes,
    runtime_home,
    stop_pid,
)

KAFKA_VERSION = "4.3.1"
ENV_LIBS = "STREAMS_RUNTIME_KAFKA_LIBS"
#: where scripts/setup_kafka.sh copies the classpath, relative to the checkout
CACHE_DIR = f".jvm/apache-kafka-{KAFKA_VERSION}"
STARTED_LINE = "Kafka Server started"
#: JVM options of each node: a small heap that can grow, G1 with short pauses
log = logging.getLogger(__name__)

#: addresses a node cannot advertise (see ``host`` of :class:`ApacheKafkaCluster`)
WILDCARDS = frozenset({"0.0.0.0", "::", "[::]"})
#: server.properties settings the cluster derives from its nodes, ports and directories: an
#: override of one would break the cluster (every other setting may be overridden)
MANAGED_SETTINGS = frozenset(
    {
        "process.roles",
        "node.id",
        "controller.quorum.voters",
        "listeners",
        "advertised.listeners",
        "controller.listener.names",
        "inter.broker.listener.name",
        "listener.security.protocol.map",
        "log.dirs",
    }
)
#: starts tried when a node finds a port picked for it taken (each on new ports)
PORT_ATTEMPTS = 3
#: time retention runs once a day: longer than any test session (see the module docstring)
RETENTION_CHECK_INTERVAL_MS = 24 * 3600 * 1000

JVM_OPTS = ("-Xms128m", "-Xmx768m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true")
#: the class-data-sharing archive of the broker's classes, next to the jars (made by setup); a JVM
#: that cannot use it (another Java) ignores it and loads classes as usual
CDS_ARCHIVE = "kafka-cds.jsa"
LOG4J2 = """status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.cleaner.name = kafka.log.LogCleaner
logger.cleaner.level = INFO
logger.state.name = state.change.logger
logger.state.level = WARN
"""


def classpath_dir() -> Path:
    """The directory of jars to run Kafka from (step 1); a clear error when setup has not run."""
    override = os.environ.get(ENV_LIBS)
    candidates = [Path(override)] if override else [Path(__file__).resolve().parents[2] / CACHE_DIR]
    for path in candidates:
        if path.is_dir() and any(path.glob("kafka_2.13-*.jar")):
            return path
    where = f"{ENV_LIBS}={override!r}" if override else str(candidates[0])
    raise BrokerError(
        f"Apache Kafka {KAFKA_VERSION} is not set up: no kafka_2.13 jar in {where}; run "
        f"'make setup-kafka' (resolves jvm/apache-kafka/pom.xml from Maven Central once) or set "
        f"{ENV_LIBS} to the libs/ directory of a Kafka distribution"
    )


def broker_environ() -> dict[str, str]:
    """The broker's environment: ours without ``JDK_JAVA_OPTIONS`` (options meant for short JVM
    jobs, such as the test suite's for Spark, must not tune a long-running server)."""
    return {k: v for k, v in os.environ.items() if k != "JDK_JAVA_OPTIONS"}


def java_binary() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise BrokerError("Apache Kafka needs Java 17+: install openjdk-17-jre-headless or set JAVA_HOME")
    return found


@dataclass
class KafkaNode:
    """One combined broker+controller process of the cluster."""

    node_id: int
    port: int
    controller_port: int
    internal_port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    #: size of the log when the current process started (its start line is looked for after it)
    log_offset: int = 0
    #: the address every listener of the node binds and advertises
    host: str = HOST

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    @property
    def properties(self) -> Path:
        return self.directory / "server.properties"

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


class ApacheKafkaCluster:
    """Apache Kafka on ports it picks (on loopback, or on ``host``), owned by whoever calls :meth:`start`.

    :param nodes: 1 (one combined broker+controller) or 3 (three, all in the controller quorum).
    :param data_dir: where node directories go (logs, data, properties); default a new temp dir
        that :meth:`stop` removes.
    :param state_file: where to record kind, pids and address for other commands.
    :param startup_timeout: seconds to wait for every node to start.
    :param advertised_port: (1 node only) the loopback port the broker tells clients to connect
        to; a test puts a TCP proxy there to cut the network between clients and broker.
    :param sasl_users: when given, the clients' listener is SASL_PLAINTEXT with the PLAIN
        mechanism and these ``{user: password}`` accounts (brokers and controllers talk among
        themselves on listeners of their own, unauthenticated); see :meth:`client_settings`.
    :param host: the address every node listens on and advertises (default ``127.0.0.1``): one
        of this machine's addresses that the clients reach, so that clients on other hosts can
        use the cluster. Not a wildcard (``0.0.0.0``, ``::``): a broker tells its clients the
        address to connect to, and a wildcard is no such address.
    """

    kind = "kafka"

    def __init__(
        self,
        *,
        nodes: int = 1,
        data_dir: Path | str | None = None,
        state_file: Path | str | None = None,
        startup_timeout: float = 90.0,
        advertised_port: int | None = None,
        sasl_users: dict[str, str] | None = None,
        host: str = HOST,
        overrides: Mapping[str, str] | None = None,
    ) -> None:
        if nodes not in (1, 3):
            raise BrokerError(f"nodes must be 1 or 3 (got {nodes})")
        if advertised_port is not None and nodes != 1:
            raise BrokerError("advertised_port needs a 1-node cluster")
        if not host or host in WILDCARDS:
            raise BrokerError(
                f"host {host!r}: give the address the clients connect to (a broker advertises it), "
                "not a wildcard"
            )
        self.host = host
        self.node_count = nodes
        self._owns_data_dir = data_dir is None
        self.data_dir = Path(data_dir) if data_dir else None
        self.state_file = Path(state_file) if state_file else None
        self.startup_timeout = startup_timeout
        self._advertised_port = advertised_port
        self._sasl_users = dict(sasl_users or {})
        managed = sorted(set(overrides or {}) & MANAGED_SETTINGS)
        if managed:
            raise BrokerError(
                f"broker setting(s) {', '.join(managed)}: set by the cluster itself (its addresses, "
                "roles and directories), not overridable; the others of server.properties are"
            )
        #: server.properties settings over this class's defaults (kafka-server-start's --override)
        self.overrides = {key: str(value) for key, value in (overrides or {}).items()}
        self.nodes: list[KafkaNode] = []
        self.cluster_id: str | None = None
        #: write a class-data-sharing archive of the classes loaded here when the JVM exits
        self.dump_cds_to: Path | None = None
        self.start_seconds: float | None = None

    # ------------------------------------------------------------------ addresses
    @property
    def bootstrap_servers(self) -> str:
        if not self.nodes:
            raise BrokerError("the Apache Kafka cluster is not started")
        if self._advertised_port is not None:
            return f"{self.host}:{self._advertised_port}"
        return ",".join(node.address for node in self.nodes)

    def client_settings(self, user: str | None = None, password: str | None = None) -> dict[str, str]:
        """librdkafka settings a client of this cluster needs (none without ``sasl_users``)."""
        if not self._sasl_users:
            return {}
        user = user or next(iter(self._sasl_users))
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "PLAIN",
            "sasl.username": user,
            "sasl.password": self._sasl_users[user] if password is None else password,
        }

    @property
    def port(self) -> int | None:
        """The first node's client port (what a TCP proxy in front of a 1-node cluster targets)."""
        return self.nodes[0].port if self.nodes else None

    @property
    def log_file(self) -> Path:
        return self.nodes[0].log_file if self.nodes else Path("-")

    @property
    def pid(self) -> int | None:
        return self.nodes[0].pid if self.nodes else None

    def rss_bytes(self) -> int:
        """Resident memory of every node process, summed."""
        return sum(rss_bytes(node.pid) or 0 for node in self.nodes if node.pid)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> BrokerInfo:
        """Start every node and wait until the cluster answers (steps 1-6 of the module docstring)."""
        if self.nodes:
            raise BrokerError("this cluster is already running")
        began = time.monotonic()
        # Step 1: java and classpath
        java, libs = java_binary(), classpath_dir()
        classpath = str(libs / "*")
        if self.data_dir is None:
            self.data_dir = Path(tempfile.mkdtemp(prefix="apache-kafka-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "log4j2.properties").write_text(LOG4J2)
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                self._start_nodes(java, classpath)
                break
            except BrokerError as exc:
                self._stop_nodes()
                if attempt == PORT_ATTEMPTS or "Address already in use" not in str(exc):
                    self.stop()
                    raise
                # a port picked free was taken before the node bound it (another process, or a
                # client's outgoing connection given it as its local port): new ports, new cluster
                log.info("Apache Kafka: a picked port was taken meanwhile; starting again on new ports")
        self.start_seconds = time.monotonic() - began
        # Step 6: record
        info = BrokerInfo(
            pid=self.nodes[0].pid or 0,
            bootstrap_servers=self.bootstrap_servers,
            log_file=str(self.log_file),
            started_at=time.time(),
            kind=self.kind,
            pids=[node.pid or 0 for node in self.nodes],
            data_dir=str(self.data_dir),
        )
        if self.state_file:
            info.write(self.state_file)
        return info

    def _start_nodes(self, java: str, classpath: str) -> None:
        """Steps 2-5 of the module docstring."""
        assert self.data_dir is not None
        # Step 2: ports and properties
        host = self.host
        self.nodes = [
            KafkaNode(
                node_id=i + 1,
                port=free_port(host),
                controller_port=free_port(host),
                internal_port=free_port(host),
                directory=self.data_dir / f"node-{i + 1}",
                host=host,
            )
            for i in range(self.node_count)
        ]
        voters = ",".join(f"{n.node_id}@{host}:{n.controller_port}" for n in self.nodes)
        for node in self.nodes:
            shutil.rmtree(node.directory, ignore_errors=True)  # a start is a new cluster, as Tansu's is
            node.directory.mkdir(parents=True)
            node.properties.write_text(self._properties(node, voters))
        # Step 3: format every node with one cluster id (the storage tool's id format: 16 random
        # bytes, URL-safe base64 without padding)
        self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        for node in self.nodes:
            # ``--cluster-id=<id>``, one argument: an id can begin with "-", which the tool's parser
            # would take for an option as the separate argument of ``-t``
            self._run_tool(
                java, classpath, ["format", f"--cluster-id={self.cluster_id}", f"--config={node.properties}"]
            )
        # Step 4: start
        for node in self.nodes:
            self._spawn(java, classpath, node)
        # Step 5: wait
        self._wait_started(self.nodes)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop every node (SIGTERM: a controlled shutdown, then SIGKILL after ``timeout``)."""
        self._stop_nodes(timeout)
        if self.state_file and self.state_file.exists():
            self.state_file.unlink(missing_ok=True)
        if self._owns_data_dir and self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def _stop_nodes(self, timeout: float = 15.0) -> None:
        for node in self.nodes:  # all at once: a controlled shutdown of each runs in parallel
            if node.alive():
                assert node.process is not None
                node.process.terminate()
        for node in self.nodes:
            if node.process is not None:
                stop_pid(node.process.pid, timeout, process=node.process)
                node.process = None
        self.nodes = []

    def __enter__(self) -> ApacheKafkaCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ one node (fault injection)
    def kill_node(self, node_id: int) -> None:
        """SIGKILL one node (a crash: no controlled shutdown, no flush)."""
        node = self._node(node_id)
        if node.process is not None:
            stop_pid(node.process.pid, 0.0, process=node.process)
            node.process = None

    def stop_node(self, node_id: int, timeout: float = 30.0) -> None:
        """SIGTERM one node and wait for its controlled shutdown (leadership moves first)."""
        node = self._node(node_id)
        if node.process is not None:
            stop_pid(node.process.pid, timeout, process=node.process)
            node.process = None

    def start_node(self, *node_ids: int) -> None:
        """Start stopped nodes again on their ports and data, and wait until each has started
        (all of them at once: a node whose quorum is down starts only with the others)."""
        nodes = [self._node(node_id) for node_id in node_ids]
        running = [node.node_id for node in nodes if node.alive()]
        if running:
            raise BrokerError(f"node(s) {running} are running")
        java, classpath = java_binary(), str(classpath_dir() / "*")
        for node in nodes:
            self._spawn(java, classpath, node)
        self._wait_started(nodes, min_brokers=1)

    def active_controller(self) -> int | None:
        """The node leading the controller quorum, from the nodes' own logs (the quorum's
        transitions: a node that became leader, or followers naming theirs, at the newest epoch)."""
        best: tuple[int, int] | None = None
        for node in self.nodes:
            if not node.alive():
                continue
            for line in node.log_file.read_text(errors="replace").splitlines():
                if "Completed transition to" not in line or "RaftManager" not in line:
                    continue
                epoch = re.search(r"epoch=(\d+)", line)
                if epoch is None:
                    continue
                if "transition to Leader(" in line:
                    leader: int | None = node.node_id
                else:
                    named = re.search(r"leader=(\d+)", line)
                    leader = int(named.group(1)) if named else None
                if leader is not None and (best is None or int(epoch.group(1)) >= best[0]):
                    best = (int(epoch.group(1)), leader)
        return best[1] if best else None

    def _node(self, node_id: int) -> KafkaNode:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise BrokerError(f"no node {node_id} in this cluster (nodes {[n.node_id for n in self.nodes]})")

    # ------------------------------------------------------------------ internals
    def _properties(self, node: KafkaNode, voters: str) -> str:
        advertised = self._advertised_port or node.port
        replicas, min_isr = (3, 2) if self.node_count == 3 else (1, 1)
        client = "SASL_PLAINTEXT" if self._sasl_users else "PLAINTEXT"
        host = node.host
        settings = {
            "process.roles": "broker,controller",
            "node.id": node.node_id,
            "controller.quorum.voters": voters,
            "listeners": (
                f"{client}://{host}:{node.port},INTERNAL://{host}:{node.internal_port},"
                f"CONTROLLER://{host}:{node.controller_port}"
            ),
            "advertised.listeners": f"{client}://{host}:{advertised},INTERNAL://{host}:{node.internal_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "INTERNAL",
            "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,{client}:{client},INTERNAL:PLAINTEXT",
            "log.dirs": node.directory / "data",
            "auto.create.topics.enable": "false",
            "default.replication.factor": replicas,
            "min.insync.replicas": min_isr,
            "offsets.topic.replication.factor": replicas,
            "offsets.topic.num.partitions": 8,
            "transaction.state.log.replication.factor": replicas,
            "transaction.state.log.min.isr": min_isr,
            "transaction.state.log.num.partitions": 8,
            "share.coordinator.state.topic.replication.factor": replicas,
            "share.coordinator.state.topic.min.isr": min_isr,
            "group.initial.rebalance.delay.ms": 0,
            "group.min.session.timeout.ms": 500,
            "log.cleaner.backoff.ms": 1000,
            "log.retention.check.interval.ms": RETENTION_CHECK_INTERVAL_MS,
            "log.initial.task.delay.ms": RETENTION_CHECK_INTERVAL_MS,  # the first check, 30 s by default
            "num.partitions": 1,
        }
        settings.update(self.overrides)
        if self._sasl_users:
            accounts = " ".join(f'user_{u}="{p}"' for u, p in self._sasl_users.items())
            settings["sasl.enabled.mechanisms"] = "PLAIN"
            settings["listener.name.sasl_plaintext.plain.sasl.jaas.config"] = (
                f"org.apache.kafka.common.security.plain.PlainLoginModule required {accounts};"
            )
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _jvm(self, java: str, classpath: str, broker: bool = False) -> list[str]:
        assert self.data_dir is not None
        options = list(JVM_OPTS)
        archive = Path(classpath.rstrip("*")) / CDS_ARCHIVE
        if self.dump_cds_to is not None and broker:
            options.append(f"-XX:ArchiveClassesAtExit={self.dump_cds_to}")
        elif archive.is_file():
            options.append(f"-XX:SharedArchiveFile={archive}")
        log4j = f"-Dlog4j2.configurationFile={self.data_dir / 'log4j2.properties'}"
        return [java, *options, log4j, "-cp", classpath]

    def _run_tool(self, java: str, classpath: str, args: list[str]) -> str:
        done = subprocess.run(
            [*self._jvm(java, classpath), "kafka.tools.StorageTool", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=broker_environ(),
        )
        if done.returncode != 0:
            raise BrokerError(
                f"kafka.tools.StorageTool {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
            )
        return done.stdout

    def _spawn(self, java: str, classpath: str, node: KafkaNode) -> None:
        with open(node.log_file, "ab") as log:
            node.log_offset = log.tell()
            log.write(f"--- starting node {node.node_id} on {node.address} at {time.ctime()}\n".encode())
            log.flush()
            node.process = subprocess.Popen(
                [*self._jvm(java, classpath, broker=True), "kafka.Kafka", str(node.properties)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=broker_environ(),
            )

    def _wait_started(self, nodes: list[KafkaNode], min_brokers: int | None = None) -> None:
        from streams_runtime.kafka.clients import wait_for_metadata

        deadline = time.monotonic() + self.startup_timeout
        pending = list(nodes)
        while pending:
            for node in list(pending):
                if not node.alive():
                    code = node.process.poll() if node.process else None
                    raise BrokerError(
                        f"Apache Kafka node {node.node_id} exited at start (exit code {code}); "
                        f"log {node.log_file}:\n" + log_tail(node.log_file)
                    )
                with open(node.log_file, "rb") as log:
                    log.seek(node.log_offset)
                    if STARTED_LINE.encode() in log.read():
                        pending.remove(node)
            if pending and time.monotonic() > deadline:
                raise BrokerError(
                    f"Apache Kafka node {pending[0].node_id} did not start within {self.startup_timeout}s; "
                    f"log {pending[0].log_file}:\n" + log_tail(pending[0].log_file)
                )
            if pending:
                time.sleep(0.05)
        want = min_brokers if min_brokers is not None else self.node_count
        remaining = max(1.0, deadline - time.monotonic())
        end = time.monotonic() + remaining
        while True:
            try:
                seen = wait_for_metadata(
                    ",".join(n.address for n in self.nodes if n.alive()),
                    timeout=remaining,
                    overrides=self.client_settings(),
                )
            except TimeoutError as exc:
                raise BrokerError(
                    f"Apache Kafka started but does not answer metadata requests: {exc}"
                ) from None
            if seen >= want or time.monotonic() > end:
                return
            time.sleep(0.1)


def build_cds_archive() -> Path:
    """Start and stop a 1-node broker once, archiving the classes it loaded next to the jars
    (``scripts/setup_kafka.sh`` runs it); later starts map them instead of loading them."""
    target = classpath_dir() / CDS_ARCHIVE
    partial = target.with_name(f"kafka-cds-{os.getpid()}.jsa")
    cluster = ApacheKafkaCluster()
    cluster.dump_cds_to = partial
    cluster.start()
    cluster.stop(timeout=120.0)  # the JVM writes the archive as it exits
    if not partial.is_file():
        raise BrokerError(f"the JVM wrote no class-data-sharing archive to {partial}")
    partial.replace(target)
    return target


def stop_recorded(info: BrokerInfo, timeout: float = 15.0) -> bool:
    """Stop the nodes recorded in a state file (``broker stop``); True when all are gone."""
    gone = all(stop_pid(pid, timeout) if pid_alive(pid) else True for pid in info.all_pids)
    if gone and info.data_dir and Path(info.data_dir).is_relative_to(runtime_home()):
        shutil.rmtree(info.data_dir, ignore_errors=True)
    return gone
