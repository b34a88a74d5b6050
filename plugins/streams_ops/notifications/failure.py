"""FailureNotifier: what the DAGs call when a task fails, and how to plug another notifier in.

The default writes one line to the Airflow log of the callback and appends a JSON line (DAG, run,
task, map index, try, the exception, the log URL) to ``$STREAMS_RUNTIME_HOME/alerts/airflow.jsonl``,
a file an alerting agent can tail. A deployment swaps it without touching the DAGs: set
``STREAMS_OPS_FAILURE_NOTIFIER`` to ``package.module:factory`` (a class or function returning a
callable that takes the task context, e.g. a provider's Slack or SMTP notifier) and
:func:`failure_callbacks` returns that instead.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from airflow.sdk import BaseNotifier

ENV_FACTORY = "STREAMS_OPS_FAILURE_NOTIFIER"


def alerts_file() -> Path:
    """``alerts/airflow.jsonl`` in the project's home (``$STREAMS_RUNTIME_HOME`` when set, else
    found as every streams-runtime command finds it)."""
    from streams_runtime.brokers import runtime_home

    return runtime_home() / "alerts" / "airflow.jsonl"


class FailureNotifier(BaseNotifier):
    """Log the failure and append it to an alerts file (see the module docstring)."""

    template_fields = ("path",)

    def __init__(self, path: str | None = None) -> None:
        super().__init__()
        self.path = path

    def notify(self, context: Any) -> None:
        ti = context.get("ti") or context.get("task_instance")
        exception = context.get("exception")
        record = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "dag_id": getattr(ti, "dag_id", None),
            "run_id": getattr(ti, "run_id", None) or context.get("run_id"),
            "task_id": getattr(ti, "task_id", None),
            "map_index": getattr(ti, "map_index", -1),
            "try_number": getattr(ti, "try_number", None),
            "error": f"{type(exception).__name__}: {exception}" if exception else None,
            "log_url": getattr(ti, "log_url", None),
        }
        self.log.error("task failed: %s", json.dumps(record))
        target = Path(self.path) if self.path else alerts_file()
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a") as out:
            out.write(json.dumps(record) + "\n")


def failure_callbacks() -> list[Callable[[Any], None]]:
    """The failure callbacks of the repo's DAGs: ``STREAMS_OPS_FAILURE_NOTIFIER``'s, else the default."""
    spec = os.environ.get(ENV_FACTORY, "").strip()
    if not spec:
        return [FailureNotifier()]
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"{ENV_FACTORY}={spec!r}: expected 'package.module:factory'")
    factory = getattr(importlib.import_module(module_name), attribute)
    return [factory()]
