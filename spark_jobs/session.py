"""A local SparkSession for the jobs, the CLI and the tests, with the ``kafka_range`` format registered.

Owned by whoever calls :func:`local_session` (stop it when done). Settings, and why:

* ``PYSPARK_PYTHON`` defaults to this interpreter, so Spark's Python workers import the same
  venv (and with it ``spark_jobs`` and ``streams_runtime``, installed in editable mode);
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
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from spark_jobs.kafka_source import register

__all__ = ["local_session", "session_or_local"]

LOG4J2 = Path(__file__).with_name("log4j2.properties")


def local_session(
    app_name: str = "streams-runtime-spark-jobs", master: str = "local[*]", shuffle_partitions: int = 4
) -> SparkSession:
    """Get or create a local session configured as the module docstring says."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG4J2.as_uri()}")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("WARN")
    register(spark)
    return spark


def session_or_local() -> SparkSession:
    """The active session (with the format registered), or a new local one."""
    spark = SparkSession.getActiveSession()
    if spark is None:
        return local_session()
    register(spark)
    return spark
