"""The worker launcher against a fake app and a fake KafkaStreams (no broker)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable
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


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process (Linux /proc), 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _until(
    done: Callable[[], bool],
    what: Callable[[], str],
    launcher: WorkerLauncher,
    *,
    exits_expected: bool = False,
    cpu_budget_s: float = 15.0,
    hang_s: float = 300.0,
) -> None:
    """Wait until ``done()``. Fails at once when an instance exits (unless ``exits_expected``),
    when the instances used ``cpu_budget_s`` of CPU between them first (a start that is slow in
    itself: one takes about 0.5 s of CPU), or after ``hang_s`` (one stuck without running). Not
    a wall-clock bound on a start: 20 s of wall clock failed once under a load average of 30,
    the instances not yet scheduled, the product not slow."""
    deadline = time.monotonic() + hang_s
    while not done():
        processes = list(launcher.processes.items())
        if not exits_expected:
            exited = {index: p.poll() for index, p in processes if p.poll() is not None}
            assert not exited, f"instances exited before {what()}: {exited}"
        used = sum(_cpu_seconds(p.pid) for _, p in processes)
        assert used < cpu_budget_s, f"{what()} after {used:.1f} s of the instances' CPU"
        assert time.monotonic() < deadline, f"{what()} after {hang_s} s: an instance is stuck"
        time.sleep(0.05)


def _wait_for_files(directory: Path, count: int, launcher: WorkerLauncher) -> list[Path]:
    """The instances' files once ``count`` are written (see :func:`_until`)."""
    files: list[Path] = []

    def written() -> bool:
        files[:] = sorted(directory.glob("instance-*.json"))
        return len(files) >= count

    _until(written, lambda: f"only {sorted(directory.iterdir())}", launcher)
    return files


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
        files = _wait_for_files(fake_dir, 2, launcher)
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
        _wait_for_files(fake_dir, 2, launcher)
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

    def reported() -> bool:  # instance 0 running (it handles SIGTERM by then), instance 1 dead
        launcher.reap()
        return (fake_dir / "instance-0.json").exists() and any("died" in line for line in lines)

    _until(
        reported,
        lambda: f"instance 0 not started or no death reported in {lines}",
        launcher,
        exits_expected=True,
    )
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
