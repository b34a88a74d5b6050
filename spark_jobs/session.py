"""The one home of the SparkSession: local or on a standalone cluster, with the Kafka sources.

Owned by whoever calls :func:`local_session` (stop it when done); :func:`job_session` is the
context manager a task runs a job in (it borrows the active session, or creates one on the given
master and stops it at the end). Settings, and why:

* ``PYSPARK_PYTHON`` defaults to this interpreter, so Spark's Python workers import the same
  venv (pyspark, confluent-kafka, Great Expectations);
* Spark's own Kafka connector (``format("kafka")``: spark-sql-kafka-0-10 and the three jars it
  needs that pyspark lacks) is handed over with ``spark.jars`` from the cache that
  ``scripts/setup_spark_kafka.sh`` fills (``.jvm/spark-kafka-<pyspark version>/``; never resolved
  at run time); without that cache the session still starts, and :func:`connector_jars` says why
  the connector is missing (docs/decisions/0011-spark-kafka-connector.md);
* the ``kafka_range`` Python data source is registered on every session;
* on a cluster master (``spark://host:port``) the executors run in other JVMs and Python
  workers: the driver zips the ``spark_jobs`` and ``streams_runtime`` packages it imported and
  ships them with ``addPyFile``, so every executor runs the driver's code, whatever its own
  environment has installed; executors get a small heap (``STREAMS_SPARK_EXECUTOR_MEMORY``,
  default 512m);
* the driver binds to 127.0.0.1 for a local master or a cluster on this machine; for a cluster
  elsewhere it advertises ``$STREAMS_SPARK_DRIVER_HOST`` (default: this host's name), so
  executors can reach it;
* the UI is off and shuffles use few partitions: backfill results are small (users x windows);
* the session time zone is UTC, so window starts print as the epoch-aligned instants they are;
* py4j logs at WARNING: its INFO lines (one per closed gateway connection) are noise, and at
  interpreter exit they go to streams that are already closed;
* the driver JVM logs through ``spark_jobs/log4j2.properties``: WARN and above
  (``STREAMS_SPARK_LOG_LEVEL`` to change it) to stdout, so a task log does not show Spark's
  start-up lines as errors (the JVM itself still prints one incubator-module notice to stderr).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pyspark
from pyspark.sql import SparkSession

from spark_jobs.kafka_source import register

__all__ = [
    "CONNECTOR_ENV",
    "DEFAULT_MASTER",
    "connector_jars",
    "is_cluster",
    "job_session",
    "local_session",
    "session_or_local",
    "validate_master",
]

LOG4J2 = Path(__file__).with_name("log4j2.properties")
DEFAULT_MASTER = "local[*]"
#: a directory of the connector's jars, instead of the setup cache
CONNECTOR_ENV = "STREAMS_SPARK_KAFKA_JARS"
#: where scripts/setup_spark_kafka.sh puts the connector, relative to the checkout
CONNECTOR_CACHE = Path(__file__).resolve().parents[1] / ".jvm" / f"spark-kafka-{pyspark.__version__}"
CONNECTOR_JAR = "spark-sql-kafka-0-10_2.13-*.jar"
#: the packages a cluster's executors need from the driver (the jobs and the client boundary)
SHIPPED_PACKAGES = ("spark_jobs", "streams_runtime")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def connector_jars() -> tuple[list[Path], str]:
    """The jars of Spark's Kafka connector, and, when there are none, why (the fix to run)."""
    override = os.environ.get(CONNECTOR_ENV)
    where = Path(override) if override else CONNECTOR_CACHE
    jars = sorted(where.glob("*.jar")) if where.is_dir() else []
    if not any(j.match(CONNECTOR_JAR) for j in jars):
        named = f"{CONNECTOR_ENV}={override!r}" if override else str(where)
        return [], (
            f"Spark's Kafka connector for pyspark {pyspark.__version__} is not set up: no "
            f"{CONNECTOR_JAR} in {named}; run 'make setup-spark-kafka' (resolves "
            "jvm/spark-kafka/pom.xml from Maven Central once)"
        )
    return jars, ""


def validate_master(master: str) -> str:
    """``master`` if Spark would take it from us: ``local``, ``local[N]``, ``local[*]`` or
    ``spark://host:port``.

    :raises ValueError: naming the value and the allowed forms.
    """
    text = master.strip()
    if text == "local" or (text.startswith("local[") and text.endswith("]")):
        return text
    if text.startswith("spark://"):
        parts = urlsplit(text)
        if parts.hostname and parts.port:
            return text
    raise ValueError(
        f"Spark master {master!r}: allowed values are local, local[N], local[*] or spark://HOST:PORT "
        "(a standalone cluster's master)"
    )


def is_cluster(master: str) -> bool:
    """Whether ``master`` runs executors in JVMs of their own (a standalone cluster)."""
    return master.startswith("spark://")


def _driver_host(master: str) -> tuple[str, str]:
    """``(bind address, advertised host)`` of the driver for ``master``."""
    if not is_cluster(master) or urlsplit(master).hostname in LOOPBACK:
        return "127.0.0.1", "127.0.0.1"
    return "0.0.0.0", os.environ.get("STREAMS_SPARK_DRIVER_HOST") or socket.gethostname()


def _zip_packages(into: Path) -> Path:
    """The driver's own ``spark_jobs`` and ``streams_runtime`` sources, as one zip for executors."""
    import streams_runtime

    path = into / "streams-runtime-jobs.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in (sys.modules[__name__.split(".")[0]], streams_runtime):
            root = Path(package.__file__ or "").parent
            for source in sorted(root.rglob("*")):
                if source.suffix in (".py", ".properties") and "__pycache__" not in source.parts:
                    archive.write(source, source.relative_to(root.parent).as_posix())
    return path


def local_session(
    app_name: str = "streams-runtime-spark-jobs", master: str = DEFAULT_MASTER, shuffle_partitions: int = 4
) -> SparkSession:
    """Get or create a session on ``master`` configured as the module docstring says."""
    master = validate_master(master)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    bind, host = _driver_host(master)
    os.environ.setdefault("SPARK_LOCAL_IP", bind if bind != "0.0.0.0" else host)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", bind)
        .config("spark.driver.host", host)
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}")
    )
    jars, _ = connector_jars()
    if jars:
        builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    if is_cluster(master):
        builder = builder.config(
            "spark.executor.memory", os.environ.get("STREAMS_SPARK_EXECUTOR_MEMORY", "512m")
        ).config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"])
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if is_cluster(master):
        shipped = Path(tempfile.mkdtemp(prefix="spark-pyfiles-"))
        spark.sparkContext.addPyFile(str(_zip_packages(shipped)))
    register(spark)
    return spark


def session_or_local(master: str | None = None) -> SparkSession:
    """The active session (with the format registered), or a new one on ``master`` (default local)."""
    spark = SparkSession.getActiveSession()
    if spark is None:
        return local_session(master=master or DEFAULT_MASTER)
    register(spark)
    return spark


@contextmanager
def job_session(
    master: str | None = None, app_name: str = "streams-runtime-spark-jobs"
) -> Iterator[SparkSession]:
    """A task's session: the active one (borrowed, left running), else a new one on ``master``
    (default local) that is stopped when the block ends, so a cluster sees the application end."""
    active = SparkSession.getActiveSession()
    if active is not None:
        register(active)
        yield active
        return
    spark = local_session(app_name=app_name, master=master or DEFAULT_MASTER)
    try:
        yield spark
    finally:
        spark.stop()
