"""DataDocsLink: the task's "Data Docs" button, opening the Great Expectations report of its run.

The backfill and recompute tasks push the report's address to XCom under :data:`XCOM_KEY` (a
``file://`` URL of the Data Docs index built for that run, or an ``http(s)`` URL when the docs are
served); the link reads it back for the task instance (mapped ones included), so every interval
of a backfill has its own report. A ``file://`` address below the Data Docs root becomes the
same-origin ``/data-docs/...`` link the API server serves (:mod:`streams_ops.plugins.data_docs`):
Airflow's UI shows no ``file://`` link. :func:`push_data_docs` pushes the address and prints the
report's full http address in the task log (where a user reading the log clicks it).
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseOperatorLink
from airflow.sdk.execution_time.xcom import XCom

XCOM_KEY = "data_docs_url"


class DataDocsLink(BaseOperatorLink):
    """Link to the Great Expectations Data Docs of the task instance's validation."""

    name = "Data Docs"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        from streams_ops.plugins.data_docs import link_for

        value = XCom.get_value(ti_key=ti_key, key=XCOM_KEY)
        return link_for(str(value)) if value else ""


def push_data_docs(ti: Any, log: Any, url: str) -> None:
    """Push the report's address for the link, and log its http address (``[api] base_url``)."""
    from streams_ops.plugins.data_docs import absolute_link

    ti.xcom_push(key=XCOM_KEY, value=url)
    log.info("Data Docs (Great Expectations report): %s", absolute_link(url))
