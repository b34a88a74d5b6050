"""StreamsWorkerHook: JSON over HTTP to a stream worker's endpoint (interactive queries, admin).

The endpoint is the worker HTTP API (``streams_runtime.server``); this hook reaches it: the base URL
comes from an Airflow Connection, every call has a timeout, and every failure raises
:class:`StreamsWorkerError` naming the method, the URL and what went wrong (status and the start of
the body, a timeout, a refused connection, a body that is not JSON).

Base URL, first match wins: the ``base_url`` given to the hook; the connection's extra
``base_url``; else ``<schema or http>://<host>:<port>`` (``host`` may already carry the scheme).
Token (sent as ``Authorization: Bearer <token>``, the worker's ``application_server_token``): the
``token`` given to the hook, else the connection's password or extra ``token``. Example::

    AIRFLOW_CONN_STREAMS_WORKER='{"conn_type": "http", "host": "127.0.0.1", "port": 7070,
                                  "password": "s3cret"}'

Admin calls: :meth:`StreamsWorkerHook.list_tasks`, :meth:`StreamsWorkerHook.store_instances` and
:meth:`StreamsWorkerHook.rebuild_store`.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from functools import cached_property
from typing import Any

from airflow.sdk import BaseHook


class StreamsWorkerError(RuntimeError):
    """A call to a worker's endpoint failed; the message says which call and why."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class StreamsWorkerHook(BaseHook):
    """GET/POST JSON against one worker endpoint.

    :param worker_conn_id: the Airflow Connection of the worker's HTTP endpoint.
    :param timeout: seconds for each request (connect and read).
    """

    conn_name_attr = "worker_conn_id"
    default_conn_name = "streams_worker"
    conn_type = "http"
    hook_name = "Streams worker endpoint"

    def __init__(
        self,
        worker_conn_id: str = default_conn_name,
        timeout: float = 10.0,
        *,
        base_url: str | None = None,
        token: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.worker_conn_id = worker_conn_id
        self.timeout = timeout
        self._given_base_url = base_url
        self._given_token = token

    @cached_property
    def base_url(self) -> str:
        """The endpoint's base URL, without a trailing slash."""
        if self._given_base_url:
            given = (
                self._given_base_url if "://" in self._given_base_url else f"http://{self._given_base_url}"
            )
            return given.rstrip("/")
        conn = self.get_connection(self.worker_conn_id)
        extra = conn.extra_dejson or {}
        if extra.get("base_url"):
            return str(extra["base_url"]).rstrip("/")
        if not conn.host:
            raise StreamsWorkerError(
                f"connection {self.worker_conn_id!r} has no host and no extra 'base_url'"
            )
        host = conn.host if "://" in conn.host else f"{conn.schema or 'http'}://{conn.host}"
        return (host if conn.port is None else f"{host}:{conn.port}").rstrip("/")

    @cached_property
    def token(self) -> str | None:
        """The bearer token, or None (see the module docstring)."""
        if self._given_token:
            return self._given_token
        if self._given_base_url:
            return None
        conn = self.get_connection(self.worker_conn_id)
        return conn.password or (conn.extra_dejson or {}).get("token") or None

    def url(self, path: str, params: dict[str, Any] | None = None) -> str:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        return f"{self.base_url}/{path.lstrip('/')}{query}"

    def get_json(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """``GET base_url/path?params`` and return the decoded JSON body."""
        return self._call("GET", self.url(path, params), None)

    def post_json(self, path: str, payload: Any = None) -> Any:
        """``POST base_url/path`` with ``payload`` as JSON; return the decoded JSON body (None if empty)."""
        return self._call("POST", self.url(path), payload)

    # ------------------------------------------------------------------ admin
    def list_tasks(self) -> dict[str, Any]:
        """``GET /admin/tasks``: the worker's threads and their tasks (partitions, stores)."""
        return self.get_json("/admin/tasks")

    def tasks_owning(self, store: str) -> list[str]:
        """The ids of the worker's active tasks that own ``store``."""
        listing = self.list_tasks()
        return sorted(
            task["task_id"]
            for thread in listing.get("threads", [])
            for task in thread.get("tasks", [])
            if task.get("kind") == "active" and store in task.get("stores", [])
        )

    def store_instances(self, store: str) -> dict[str, Any]:
        """``GET /admin/stores/{store}/instances``: every task of ``store`` and the instances of the
        whole group running it (active and standby), as this worker last saw the assignment."""
        return self.get_json(f"/admin/stores/{urllib.parse.quote(store, safe='')}/instances")

    def rebuild_store(
        self, store: str, tasks: list[str] | None = None, timeout_s: float = 120.0
    ) -> dict[str, Any]:
        """``POST /admin/stores/{store}/rebuild``: the worker closes, wipes and restores its tasks
        owning ``store`` (only ``tasks`` when given) and answers its per-task report. The request
        waits for the restore: its timeout is ``timeout_s`` plus the hook's own."""
        path = f"/admin/stores/{urllib.parse.quote(store, safe='')}/rebuild"
        return self._call(
            "POST", self.url(path), {"tasks": tasks, "timeout_s": timeout_s}, timeout=timeout_s + self.timeout
        )

    def _call(self, method: str, url: str, payload: Any, timeout: float | None = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode()
        limit = timeout or self.timeout
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=limit) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode(errors="replace")
            raise StreamsWorkerError(f"{method} {url} -> HTTP {exc.code}: {detail}", status=exc.code) from exc
        except TimeoutError as exc:
            raise StreamsWorkerError(f"{method} {url} timed out after {limit}s") from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError | socket.timeout):
                raise StreamsWorkerError(f"{method} {url} timed out after {limit}s") from exc
            raise StreamsWorkerError(f"{method} {url} failed: {exc.reason}") from exc
        if not body:
            return None
        try:
            return json.loads(body)
        except ValueError as exc:
            message = f"{method} {url} returned a body that is not JSON: {body[:120]!r}"
            raise StreamsWorkerError(message) from exc

    def test_connection(self) -> tuple[bool, str]:
        """Used by the UI's "Test" button: GET the base URL."""
        try:
            self.get_json("/")
        except StreamsWorkerError as exc:
            return False, str(exc)
        return True, f"{self.base_url} answered"
