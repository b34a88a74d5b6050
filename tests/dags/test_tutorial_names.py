"""The Airflow and Spark tutorial names only DAGs, form fields and tasks that exist.

``docs/tutorials/airflow-and-spark.md`` writes a DAG as its id in backticks (`` `streams_...` ``), a
field of a trigger form as the title the form shows followed by its Param, ``**Title**
(`param`)``, optionally with the default the reader will see, ``**Title** (`param`, default
`value`)``, and a task as ``task `task_id` ``. Each is checked against the repo's DAGs as the
DAG processor parses them, so a renamed DAG, Param, title, default or task fails here instead of
leaving the page wrong. (Its commands are checked in tests/docs/test_tutorial_airflow.py.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = (ROOT / "docs" / "tutorials" / "airflow-and-spark.md").read_text()

#: the provider's package: the one name in backticks of the form `streams_...` that Airflow does not hold
PROVIDER = "streams_ops"

# the page wraps its lines: any whitespace between the parts
FIELD = re.compile(
    r"\*\*(?P<title>[^*]+)\*\*\s+\(`(?P<name>[a-z_]+)`(?:,\s+default\s+`(?P<default>[^`]*)`)?\)"
)
#: what starts a field's mention; each must be a whole FIELD, or the check would skip it silently
FIELD_START = re.compile(r"\*\*[^*]+\*\*\s+\(`")
TASK = re.compile(r"\btasks? `(?P<id>[a-z_]+)`")


def _named_dags() -> set[str]:
    return set(re.findall(r"`(streams_[a-z_]+)`", TEXT))


def _shown(value: Any) -> str:
    """A default as the page writes it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def test_the_page_names_the_four_dags_and_their_fields() -> None:
    assert {
        "streams_provision_topics",
        "streams_spark_backfill",
        "streams_changelog_compaction_check",
        "streams_state_rebuild",
    } <= _named_dags()
    assert len(FIELD.findall(TEXT)) >= 6  # the form fields the walk sets or reads
    assert len(FIELD.findall(TEXT)) == len(FIELD_START.findall(TEXT)), "a field written another way"
    assert TASK.search(TEXT)


def _names_in_dags(dag_bag: Any) -> set[str]:
    """DAG ids, and the connections and pools the DAGs use: their Params' defaults, their tasks' pools."""
    names = set(dag_bag.dags)
    for dag in dag_bag.dags.values():
        for name in dag.params:
            value = dag.params.get_param(name).value
            names.update(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
        names.update(task.pool for task in dag.tasks)
    return names


def test_every_name_in_backticks_is_a_dag_a_connection_or_a_pool(dag_bag: Any) -> None:
    assert (ROOT / "plugins" / PROVIDER / "__init__.py").is_file()
    known = _names_in_dags(dag_bag) | {PROVIDER}
    for name in sorted(_named_dags()):
        assert name in known, f"the page names {name!r}: no DAG, Param default or pool of dags/ is called so"


@pytest.mark.parametrize(("title", "name", "default"), FIELD.findall(TEXT), ids=lambda v: " ".join(v.split()))
def test_every_form_field_is_a_param_with_that_title(
    dag_bag: Any, title: str, name: str, default: str
) -> None:
    title = " ".join(title.split())  # the page wraps its lines
    found = []
    for dag in dag_bag.dags.values():
        if name in dag.params:
            param = dag.params.get_param(name)
            found.append((dag.dag_id, param.schema.get("title"), _shown(param.value)))
    assert found, f"no DAG has a Param {name!r}"
    titled = [f for f in found if f[1] == title]
    assert titled, f"the form shows {name!r} as {[f[1] for f in found]}, the page says {title!r}"
    if default:
        defaults = [f[2] for f in titled]
        assert default in defaults, f"{name} defaults to {defaults}, the page says {default}"


def test_every_task_named_is_a_task_of_a_dag(dag_bag: Any) -> None:
    task_ids = {task.task_id for dag in dag_bag.dags.values() for task in dag.tasks}
    for match in TASK.finditer(TEXT):
        assert match.group("id") in task_ids, f"no DAG has a task {match.group('id')!r}"
