"""RebuildStateStoreOperator: rebuild a store from its changelog on every instance owning it.

Steps:

  1. ask the given workers, in turn, until one answers, which instance of the group runs each of
     the store's tasks (``GET /admin/stores/{store}/instances``: the group's assignment, so one
     worker endpoint -- or a load-balanced service name -- is enough to find them all);
  2. plan each task on its active instance, exactly once (:func:`streams_ops.state_rebuild.plan_rebuild`);
     a task without an active instance (a rebalance) stops the run before anything is touched;
  3. ``POST /admin/stores/{store}/rebuild`` on each instance with its own tasks (reached at its
     advertised ``application_server``, with the scheme and token of the worker that answered);
     an instance that fails is reported and the others still run;
  4. judge the per-task reports (:func:`streams_ops.state_rebuild.judge`) and check that every
     planned task has one (:func:`streams_ops.state_rebuild.not_rebuilt`).

The run fails, naming the partitions, when a task was not rebuilt (retried: an instance may be back,
the group stable) or a restored store's key count differs from its changelog's live keys (or,
after a recomputation, from the recomputed keys, or input was processed between the recomputation
and the rebuild: not retried). The table of every task is logged and the rows are returned (XCom)
either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowFailException

from streams_ops.operators._coerce import as_list

#: worker answers that a retry cannot change: unauthorized, forbidden, unknown store, bad request
_FINAL_STATUSES = {400, 401, 403, 404, 422}


class RebuildStateStoreOperator(BaseOperator):
    """Rebuild ``store`` on every instance owning it; fail with a per-task report on any mismatch.

    :param store: the state store name.
    :param workers: worker endpoints to ask for the group's instances (any one that answers is
        enough): base URLs (``http://host:port``, ``host:port``) or Airflow Connection ids of their
        HTTP endpoints (list or comma-separated string).
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

    def _group_view(self) -> tuple[Any, dict[str, Any]]:
        """Step 1: the first worker answering, and its view of the store's instances."""
        from streams_ops.hooks.streams_worker import StreamsWorkerError

        workers = as_list(self.workers)
        if not workers:
            raise AirflowFailException(
                "no worker endpoints given: set 'workers' to base URLs or connection ids"
            )
        errors = []
        for worker in workers:
            hook = self.hook_for(worker)
            try:
                return hook, hook.store_instances(self.store)
            except StreamsWorkerError as exc:
                if exc.status in _FINAL_STATUSES:
                    raise
                errors.append(str(exc))
        raise StreamsWorkerError(f"none of the workers {workers} answered: {errors}")

    def _rebuild(self, context: Any) -> dict[str, Any]:
        from streams_ops.hooks.streams_worker import StreamsWorkerError, StreamsWorkerHook
        from streams_ops.state_rebuild import (
            PartitionsNotRebuiltError,
            StateRebuildError,
            describe_tasks,
            judge,
            not_rebuilt,
            plan_rebuild,
            render,
        )

        asked, view = self._group_view()
        self.log.info("instances of store %r (answered by %s): %s", self.store, asked.base_url, view)
        try:
            plan = plan_rebuild(view, as_list(self.tasks) or None)  # Step 2
        except PartitionsNotRebuiltError as exc:
            raise AirflowException(str(exc)) from exc
        except StateRebuildError as exc:
            raise AirflowFailException(str(exc)) from exc
        scheme = asked.base_url.partition("://")[0]
        responses, failures = {}, {}
        for endpoint, tasks in plan.items():  # Step 3
            url = f"{scheme}://{endpoint}"
            hook = StreamsWorkerHook(timeout=self.http_timeout, base_url=url, token=asked.token)
            self.log.info("rebuilding store %r on %s: tasks %s", self.store, url, tasks)
            try:
                responses[url] = hook.rebuild_store(self.store, tasks, float(self.rebuild_timeout))
            except StreamsWorkerError as exc:
                if exc.status in _FINAL_STATUSES:
                    raise
                failures[url] = exc
                self.log.error("store %r on %s: tasks %s NOT rebuilt: %s", self.store, url, tasks, exc)
        rows = judge(  # Step 4
            responses, input_offsets=self.input_offsets or None, recomputed_keys=self.recomputed_keys or None
        )
        missing = not_rebuilt(plan, rows)
        ok = all(r["ok"] for r in rows) and not missing
        text = render(
            rows,
            f"state rebuild of store {self.store!r}: {'passed' if ok else 'FAILED'} "
            f"({len(rows)} task(s) on {len(responses)} of {len(plan)} instance(s))",
        )
        if missing:
            reasons = "; ".join(f"{url}: {exc}" for url, exc in failures.items())
            text += f"\n{describe_tasks(missing)} of store {self.store!r} were NOT rebuilt" + (
                f" ({reasons})" if reasons else ""
            )
        result = {"store": self.store, "ok": ok, "tasks": rows, "not_rebuilt": missing}
        if not ok:
            self.log.error("%s", text)
            context["ti"].xcom_push(key="report", value=result)  # the report survives the failure
            if missing and all(r["ok"] for r in rows):
                raise AirflowException(text)  # an instance down or tasks moved: a retry may pass
            raise AirflowFailException(text)
        self.log.info("%s", text)
        return result
