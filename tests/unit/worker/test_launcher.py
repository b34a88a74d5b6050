"""The worker launcher against a fake app and a fake KafkaStreams (no broker)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from streams_runtime.errors import MissingSinkTopicError, MissingSourceTopicError
from streams_runtime.worker import (
    WorkerError,
    WorkerLauncher,
    check_topics,
    load_app,
    plan_for,
    topics_to_check,
    user_source_topics,
)

FAKES = "tests.unit.worker.fakes"
RUNTIME = f"{FAKES}:FakeStreams"


def _launcher(tmp_path: Path, lines: list[str], instances: int = 2, threads: int = 2) -> WorkerLauncher:
    return WorkerLauncher(
        f"{FAKES}:word_count_app",
        instances=instances,
        threads=threads,
        bootstrap_servers="fake:9092",
        state_dir=tmp_path / "state",
        runtime=RUNTIME,
        close_timeout=5,
        say=lines.append,
    )


def _wait_for_files(directory: Path, count: int, timeout: float = 20.0) -> list[Path]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        files = sorted(directory.glob("instance-*.json"))
        if len(files) >= count:
            return files
        time.sleep(0.05)
    raise AssertionError(f"only {sorted(directory.iterdir())} after {timeout}s")


@pytest.fixture
def fake_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    out = tmp_path / "fake"
    out.mkdir()
    monkeypatch.setenv("FAKE_STREAMS_DIR", str(out))
    monkeypatch.delenv("FAKE_STREAMS_CRASH", raising=False)
    return out


def test_should_load_a_function_returning_topology_and_config() -> None:
    app = load_app(f"{FAKES}:word_count_app")
    assert app.application_id == "fake-word-count"
    assert user_source_topics(app.topology) == ["words"]


def test_should_load_a_bare_topology_with_its_build_config() -> None:
    assert load_app(f"{FAKES}:bare_topology").application_id == "fake-word-count"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-colon", "module:attr"),
        ("tests.unit.worker.nope:app", "cannot import module"),
        (f"{FAKES}:missing", "has no attribute 'missing'"),
        (f"{FAKES}:not_a_topology", "must return a Topology"),
        (f"{FAKES}:no_application_id", "no 'application_id'"),
    ],
)
def test_should_name_what_is_wrong_with_the_app_spec(spec: str, message: str) -> None:
    with pytest.raises(WorkerError, match=message):
        load_app(spec)


def test_should_plan_both_sub_topologies_from_the_source_partitions() -> None:
    plan = plan_for(load_app(f"{FAKES}:word_count_app").topology, {"words": 6}, instances=2, threads=3)
    assert dict(plan.tasks_per_subtopology) == {0: 6, 1: 6}
    assert plan.min_tasks_per_thread == plan.max_tasks_per_thread == 2


def test_should_check_the_sink_topics_too_before_any_instance_starts() -> None:
    app = load_app(f"{FAKES}:word_count_app")
    assert topics_to_check(app) == ["word-counts", "words"]
    check_topics(app, {"words": 6, "word-counts": 6}, "fake:9092")


def test_should_refuse_to_start_when_a_source_topic_is_missing_naming_the_sink_too() -> None:
    with pytest.raises(MissingSourceTopicError) as raised:
        check_topics(load_app(f"{FAKES}:word_count_app"), {}, "fake:9092")
    message = str(raised.value)
    assert "source topic 'words', sink topic 'word-counts' do not exist" in message
    assert "streams-runtime topics create words --partitions N --bootstrap-servers fake:9092" in message


def test_should_refuse_to_start_when_only_the_sink_topic_is_missing() -> None:
    with pytest.raises(MissingSinkTopicError, match="sink topic 'word-counts' does not exist") as raised:
        check_topics(load_app(f"{FAKES}:word_count_app"), {"words": 6}, None)
    # the sub-topology writing it has 6 tasks (the repartition topic takes the source's 6 partitions)
    assert "streams-runtime topics create word-counts --partitions 6)" in str(raised.value)


def test_should_start_each_instance_with_its_own_state_dir_and_close_all_on_stop(
    tmp_path: Path, fake_dir: Path
) -> None:
    lines: list[str] = []
    launcher = _launcher(tmp_path, lines)
    launcher.start()
    try:
        files = _wait_for_files(fake_dir, 2)
        statuses = launcher.statuses()
        assert {i: s["state"] for i, s in statuses.items()} == {0: "RUNNING", 1: "RUNNING"}
    finally:
        launcher.request_stop()
        code = launcher.wait_until_stopped()
    assert code == 0, lines
    configs = [json.loads(f.read_text().splitlines()[0]) for f in files]
    assert sorted(c["state_dir"] for c in configs) == [
        str(tmp_path / "state" / "instance-0"),
        str(tmp_path / "state" / "instance-1"),
    ]
    assert {c["num_stream_threads"] for c in configs} == {2}
    assert {c["bootstrap_servers"] for c in configs} == {"fake:9092"}
    assert all(f.read_text().splitlines()[-1] == "closed" for f in files)
    assert "instance 0 closed cleanly" in lines and "instance 1 closed cleanly" in lines


def test_should_close_every_instance_and_exit_0_on_sigterm(tmp_path: Path, fake_dir: Path) -> None:
    lines: list[str] = []
    launcher = _launcher(tmp_path, lines)

    def send_sigterm_once_started() -> None:
        _wait_for_files(fake_dir, 2)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=send_sigterm_once_started, daemon=True).start()
    assert launcher.run_until_signal() == 0, lines
    assert all(f.read_text().splitlines()[-1] == "closed" for f in fake_dir.glob("*.json"))
    assert lines[-1] == "stopped"


def test_should_report_a_dead_instance_with_its_exit_code(
    tmp_path: Path, fake_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_STREAMS_CRASH", "instance-1")
    lines: list[str] = []
    launcher = _launcher(tmp_path, lines)
    launcher.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any("died" in line for line in lines):
        launcher.reap()
        time.sleep(0.05)
    launcher.request_stop()
    code = launcher.wait_until_stopped()
    pid = launcher.processes[1].pid
    assert f"instance 1 (pid {pid}) died with exit code 3" in lines
    assert "instance 0 closed cleanly" in lines
    assert code == 1


def test_should_exit_1_when_no_instance_is_left(
    tmp_path: Path, fake_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_STREAMS_CRASH", "instance-0")
    lines: list[str] = []
    launcher = _launcher(tmp_path, lines, instances=1, threads=1)
    launcher.start()
    assert launcher.wait_until_stopped() == 1
    assert lines[-1] == "no instance is left running"
