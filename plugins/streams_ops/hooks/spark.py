"""SparkMasterHook: which Spark master a backfill runs on, from an Airflow Connection.

The connection type is the Spark provider's ``spark`` (host ``spark://HOST``, port the master's);
this hook only reads it, so the provider need not be installed. What the master is, first match
wins:

  1. the connection's ``host`` with its ``port`` (``spark://127.0.0.1`` + ``7077``), or a
     ``host`` that holds the whole URL (``spark://127.0.0.1:7077``, ``local[2]``);
  2. no such connection: ``local[*]``, a session in the task's own process.

Example, as an environment variable (docker-compose.yml sets it from ``$SPARK_MASTER_URL``)::

    AIRFLOW_CONN_STREAMS_SPARK='{"conn_type": "spark", "host": "spark://127.0.0.1", "port": 7077}'

A value that is not a master Spark takes fails with the key and the allowed forms. Nothing here
imports ``pyspark``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from airflow.sdk import BaseHook
from airflow.sdk.exceptions import AirflowNotFoundException

DEFAULT_MASTER = "local[*]"
ALLOWED = "local, local[N], local[*] or spark://HOST:PORT"


class SparkConnectionError(ValueError):
    """The Airflow Connection does not name a Spark master this project can run on."""


def master_from(host: str | None, port: int | None, conn_id: str) -> str:
    """The master URL of a connection's ``host`` and ``port`` (see the module docstring).

    :raises SparkConnectionError: naming the connection, the key and the allowed values.
    """
    text = (host or "").strip()
    if text == "local" or (text.startswith("local[") and text.endswith("]")):
        return text
    if text.startswith("spark://"):
        parts = urlsplit(text)
        if parts.port is None and port:
            text, parts = f"{text.rstrip('/')}:{port}", urlsplit(f"{text.rstrip('/')}:{port}")
        if parts.hostname and parts.port:
            return text.rstrip("/")
    raise SparkConnectionError(
        f"connection {conn_id!r}: host {host!r} (port {port!r}) is not a Spark master; allowed "
        f"values of 'host' are {ALLOWED} (the port may be given apart, as 'port')"
    )


class SparkMasterHook(BaseHook):
    """The Spark master of one Airflow Connection (``local[*]`` when it does not exist).

    :param spark_conn_id: the Connection naming the master (see the module docstring).
    """

    conn_name_attr = "spark_conn_id"
    default_conn_name = "streams_spark"
    conn_type = "spark"
    hook_name = "Spark master (streams_runtime backfills)"

    def __init__(self, spark_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spark_conn_id = spark_conn_id

    @cached_property
    def master(self) -> str:
        """``spark://host:port``, ``local[...]``, or ``local[*]`` without the connection."""
        try:
            conn = self.get_connection(self.spark_conn_id)
        except AirflowNotFoundException:
            return DEFAULT_MASTER
        return master_from(conn.host, conn.port, self.spark_conn_id)
