"""ProvisionTopicsOperator: create and verify the topics a spec file and topologies ask for.

The logic is :mod:`streams_ops.provisioning`; this operator only turns a Connection into an admin
client, logs the report and decides the task's fate: a mismatch fails the task without retries
(a retry cannot fix a topic that differs from its spec); a dry run never fails on one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from streams_ops.operators._coerce import as_bool, as_list


class ProvisionTopicsOperator(BaseOperator):
    """Create missing topics and verify existing ones against the specs; fail closed on a difference.

    :param spec_file: path of the YAML/JSON topic spec (relative paths: to the DAGs folder).
    :param topologies: extra ``package.module:attr`` topologies (list or comma-separated string).
    :param dry_run: only report what would be created and what differs.
    :param kafka_conn_id: the Connection of the cluster (see ``KafkaAdminHook``).
    :returns: the report as a dict (pushed to XCom).
    """

    template_fields: Sequence[str] = ("spec_file", "topologies", "dry_run", "kafka_conn_id")
    ui_color = "#e3f1e0"

    def __init__(
        self,
        *,
        spec_file: str,
        topologies: Any = (),
        dry_run: Any = False,
        kafka_conn_id: str = "streams_kafka",
        timeout: float = 30.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.spec_file = spec_file
        self.topologies = topologies
        self.dry_run = dry_run
        self.kafka_conn_id = kafka_conn_id
        self.timeout = timeout

    def execute(self, context: Any) -> dict[str, Any]:
        from streams_ops import provisioning
        from streams_ops.hooks.kafka_admin import KafkaAdminHook

        hook = KafkaAdminHook(kafka_conn_id=self.kafka_conn_id)
        admin = hook.get_admin_client()
        dry_run = as_bool(self.dry_run)
        spec_path = self._resolve(self.spec_file)
        self.log.info("provisioning from %s on %s (dry run: %s)", spec_path, hook.bootstrap_servers, dry_run)
        try:
            spec = provisioning.load_spec(spec_path)
            wanted = provisioning.collect_wanted(admin, spec, as_list(self.topologies), origin=spec_path.name)
            report = provisioning.provision(admin, wanted, dry_run=dry_run, timeout=self.timeout)
        except provisioning.ProvisioningError as exc:
            self.log.error("%s", exc)
            raise AirflowFailException(str(exc)) from exc
        self.log.info("%s", report.render())
        return report.as_dict()

    def _resolve(self, path: str) -> Any:
        from pathlib import Path

        candidate = Path(path)
        if candidate.is_absolute() or candidate.exists():
            return candidate
        dag_file = getattr(self.dag, "fileloc", None)
        return Path(dag_file).parent / candidate if dag_file else candidate
