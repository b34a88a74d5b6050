"""RebuildStateStoreOperator: rebuild a store from its changelog on every worker owning it.

Each worker is reached through :class:`~streams_ops.hooks.streams_worker.StreamsWorkerHook`
(``GET /admin/tasks`` to find the tasks it owns, ``POST /admin/stores/{store}/rebuild`` to close,
wipe, restore and verify them). The workers answer one report per task; the verdict
(:func:`streams_ops.state_rebuild.judge`) fails the task, without retries, when a restored store's
key count differs from its changelog's live keys (or, after a recomputation, from the recomputed
keys, or when input was processed between the recomputation and the rebuild). The table of every
task is logged and the rows are returned (XCom) either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from streams_ops.operators._coerce import as_list

#: worker answers that a retry cannot change: unauthorized, forbidden, unknown store, bad request
_FINAL_STATUSES = {400, 401, 403, 404, 422}


class RebuildStateStoreOperator(BaseOperator):
    """Rebuild ``store`` on ``workers``; fail with a per-task report on any mismatch.

    :param store: the state store name.
    :param workers: worker endpoints: base URLs (``http://host:port``, ``host:port``) or Airflow
        Connection ids of their HTTP endpoints (list or comma-separated string).
    :param tasks: task ids (``"0_1"``) to rebuild; empty: every task owning the store.
    :param token_conn_id: Connection whose password is the workers' ``application_server_token``,
        used for endpoints given as URLs (Connection ids carry their own); a missing one: no token.
    :param rebuild_timeout: seconds each worker may take to restore its tasks.
    :param input_offsets: recompute mode: ``"topic:partition" -> offset`` the recomputation read to.
    :param recomputed_keys: recompute mode: partition -> number of recomputed keys.
    :returns: ``{"store", "ok", "tasks": [rows]}`` (pushed to XCom).
    """

    template_fields: Sequence[str] = (
        "store",
        "workers",
        "tasks",
        "token_conn_id",
        "rebuild_timeout",
        "input_offsets",
        "recomputed_keys",
    )
    ui_color = "#e4ecf7"

    def __init__(
        self,
        *,
        store: str,
        workers: Any,
        tasks: Any = None,
        token_conn_id: str | None = "streams_worker",
        rebuild_timeout: Any = 120.0,
        input_offsets: Any = None,
        recomputed_keys: Any = None,
        http_timeout: float = 15.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.store = store
        self.workers = workers
        self.tasks = tasks
        self.token_conn_id = token_conn_id
        self.rebuild_timeout = rebuild_timeout
        self.input_offsets = input_offsets
        self.recomputed_keys = recomputed_keys
        self.http_timeout = http_timeout

    def _token(self) -> str | None:
        """The password of ``token_conn_id`` (``None`` when unset or the Connection does not exist)."""
        from airflow.sdk import BaseHook
        from airflow.sdk.exceptions import AirflowNotFoundException

        if not self.token_conn_id:
            return None
        try:
            return BaseHook.get_connection(self.token_conn_id).password or None
        except AirflowNotFoundException:
            self.log.warning("no connection %r: calling the workers without a token", self.token_conn_id)
            return None

    def hook_for(self, worker: str) -> Any:
        from streams_ops.hooks.streams_worker import StreamsWorkerHook

        if ":" in worker or "/" in worker:
            return StreamsWorkerHook(timeout=self.http_timeout, base_url=worker, token=self._token())
        return StreamsWorkerHook(worker_conn_id=worker, timeout=self.http_timeout)

    def execute(self, context: Any) -> dict[str, Any]:
        from streams_ops.hooks.streams_worker import StreamsWorkerError

        try:
            return self._rebuild(context)
        except StreamsWorkerError as exc:
            if exc.status in _FINAL_STATUSES:  # a retry gets the same answer (a 409 may not: tasks moved)
                raise AirflowFailException(str(exc)) from exc
            raise

    def _rebuild(self, context: Any) -> dict[str, Any]:
        from streams_ops.state_rebuild import StateRebuildError, judge, plan_owners, render

        workers = as_list(self.workers)
        if not workers:
            raise AirflowFailException(
                "no worker endpoints given: set 'workers' to base URLs or connection ids"
            )
        hooks = {w: self.hook_for(w) for w in workers}
        owned = {w: hook.tasks_owning(self.store) for w, hook in hooks.items()}
        self.log.info("tasks owning store %r per worker: %s", self.store, owned)
        try:
            plan = plan_owners(owned, as_list(self.tasks) or None)
        except StateRebuildError as exc:
            raise AirflowFailException(str(exc)) from exc
        responses = {}
        for worker, tasks in plan.items():
            self.log.info("rebuilding store %r on %s: tasks %s", self.store, worker, tasks)
            responses[worker] = hooks[worker].rebuild_store(self.store, tasks, float(self.rebuild_timeout))
        rows = judge(
            responses, input_offsets=self.input_offsets or None, recomputed_keys=self.recomputed_keys or None
        )
        ok = all(r["ok"] for r in rows)
        text = render(
            rows,
            f"state rebuild of store {self.store!r}: {'passed' if ok else 'FAILED'} "
            f"({len(rows)} task(s) on {len(plan)} worker(s))",
        )
        result = {"store": self.store, "ok": ok, "tasks": rows}
        if not ok:
            self.log.error("%s", text)
            context["ti"].xcom_push(key="report", value=result)  # the report survives the failure
            raise AirflowFailException(text)
        self.log.info("%s", text)
        return result
