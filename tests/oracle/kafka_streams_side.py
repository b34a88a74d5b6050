"""The Kafka Streams side: one JVM running Apache Kafka Streams 4.3.1's TopologyTestDriver on cases.

The program (jvm/kafka-streams-oracle) is built by ``make setup-oracle`` into the ``.jvm`` cache;
this module only starts it. It reads one case per line on stdin and answers one result per line on
stdout, in order, so one process serves the whole session. A missing or stale build is an error
naming the setup target, never a skip.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import shutil
import subprocess
import tempfile
from typing import IO, Any

ROOT = pathlib.Path(__file__).resolve().parents[2]
KAFKA_STREAMS_VERSION = "4.3.1"
MODULE = ROOT / "jvm" / "kafka-streams-oracle"
CACHE_DIR = ROOT / ".jvm" / f"kafka-streams-oracle-{KAFKA_STREAMS_VERSION}"
MAIN_CLASS = "io.streamsruntime.oracle.OracleMain"
#: short-lived work: the quick JIT tier and the serial collector start and run it fastest on 2 cores
JVM_OPTS = ("-Xms64m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
SETUP_HINT = "run `make setup-oracle` (scripts/setup_kafka_streams_oracle.sh) first"


class OracleUnavailableError(RuntimeError):
    """The oracle cannot run here: no Java, no build, or a build older than its sources."""


def source_hash() -> str:
    """The hash the setup script stamps its build with: the pom, then the sources by path."""
    digest = hashlib.sha256((MODULE / "pom.xml").read_bytes())
    for path in sorted(MODULE.joinpath("src").rglob("*.java"), key=lambda p: p.as_posix().encode()):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def check_built() -> None:
    """Raise :class:`OracleUnavailableError`, saying what to run, unless the build is current."""
    if shutil.which("java") is None:
        raise OracleUnavailableError(
            f"no `java` on PATH: the Kafka Streams oracle needs Java 17+; {SETUP_HINT}"
        )
    stamp = CACHE_DIR / ".stamp"
    if not stamp.is_file():
        raise OracleUnavailableError(
            f"the Kafka Streams oracle is not built ({CACHE_DIR} missing); {SETUP_HINT}"
        )
    if stamp.read_text().strip() != source_hash():
        raise OracleUnavailableError(
            f"the Kafka Streams oracle in {CACHE_DIR} is older than {MODULE}; {SETUP_HINT}"
        )


class KafkaStreamsOracle:
    """One oracle process. Use as a context manager; :meth:`run` sends a case, returns its result."""

    def __init__(self) -> None:
        check_built()
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            ["java", *JVM_OPTS, "-cp", f"{CACHE_DIR}/*", MAIN_CLASS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            encoding="utf-8",
        )

    def run(self, case: dict[str, Any]) -> dict[str, Any]:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps(case) + "\n")
            stdin.flush()
            line = stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise OracleUnavailableError(f"the Kafka Streams oracle exited:\n{self._stderr_text()}")
        result: dict[str, Any] = json.loads(line)
        return result

    def _stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-4000:]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> KafkaStreamsOracle:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
