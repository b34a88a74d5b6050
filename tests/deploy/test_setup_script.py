"""scripts/setup.sh: two runs at once take turns; ``PYTHON=`` rebuilds a venv of another version.

No real sync (one takes ~40 s): ``SETUP_VENV`` points the script at a temporary virtualenv whose
``bin/python`` and ``bin/uv`` are stand-ins. They record every call. In the first test the
stand-in uv's ``pip sync`` blocks on a FIFO until the test writes to it, so the first setup is
held "mid-sync" for as long as the test wants. Without the lock the second setup finds no stamp
and starts a sync of its own: it never reports waiting, and two syncs are recorded.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.conditions import wait_until

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "setup.sh"
UV_VERSION = re.search(r"^UV_VERSION=(\S+)$", SCRIPT.read_text(), re.M).group(1)

FAKE_PYTHON = """#!/usr/bin/env bash
echo "python $*" >>"$FAKE_CALLS"
case "$*" in
  *"import sys"*) echo 3.11 ;;
  *) exit 3 ;;
esac
"""

FAKE_UV = f"""#!/usr/bin/env bash
echo "uv $*" >>"$FAKE_CALLS"
case "$1 $2" in
  "--version ") echo "uv {UV_VERSION}" ;;
  "pip sync") [ -z "${{FAKE_GATE:-}}" ] || read -r _ <"$FAKE_GATE" ;;
esac
"""

# An interpreter of the given version: answers the version question and makes a venv of stand-ins
# (its python answering the same version, the stand-in uv) with ``-m venv DIR``.
FAKE_INTERPRETER = """#!/usr/bin/env bash
echo "python$FAKE_VERSION $*" >>"$FAKE_CALLS"
case "$*" in
  *"import sys"*) echo "$FAKE_VERSION" ;;
  "-m venv "*)
    mkdir -p "$3/bin"
    touch "$3/pyvenv.cfg"
    printf '#!/usr/bin/env bash\\nFAKE_VERSION=%s exec %s "$@"\\n' "$FAKE_VERSION" "$0" >"$3/bin/python"
    cp "$FAKE_UV_SCRIPT" "$3/bin/uv"
    chmod +x "$3/bin/python" "$3/bin/uv" ;;
  *) exit 3 ;;
esac
"""


class Setup:
    """One ``bash scripts/setup.sh`` in its own process group, its output collected line by line."""

    def __init__(self, env: dict[str, str]) -> None:
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            ["bash", str(SCRIPT)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip())

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def finish(self) -> int:
        code = self.process.wait(timeout=30)
        self._reader.join(timeout=5)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def test_second_setup_waits_for_the_first_and_reuses_its_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, text in (("python", FAKE_PYTHON), ("uv", FAKE_UV)):
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    calls, gate = tmp_path / "calls", tmp_path / "gate"
    calls.touch()
    os.mkfifo(gate)
    env = {
        **os.environ,
        "SETUP_VENV": str(venv),
        "PYTHON": sys.executable,
        "FAKE_CALLS": str(calls),
        "FAKE_GATE": str(gate),
    }

    def syncs() -> list[str]:
        return [line for line in calls.read_text().splitlines() if line.startswith("uv pip sync")]

    first = Setup(env)
    second = None
    try:
        wait_until(lambda: len(syncs()) == 1, 20, lambda: f"the first setup syncing: {first.lines}")
        second = Setup(env)
        wait_until(
            lambda: second.said("waiting for it"),
            20,
            lambda: f"the second setup waiting for the first; it said {second.lines}, calls {syncs()}",
        )
        assert second.process.poll() is None
        with open(gate, "w") as release:  # the first setup's sync ends
            release.write("done\n")
        assert first.finish() == 0, first.lines
        assert second.finish() == 0, second.lines
    finally:
        first.kill()
        if second is not None:
            second.kill()
    assert first.said("done in")
    assert second.lines[-1] == (
        f"[setup] {venv} is up to date with requirements.lock (Python 3.11, set up by the other run)"
    )
    assert len(syncs()) == 1  # the second reused what the first built
    assert (venv / ".lock-stamp").read_text().strip()
    assert (tmp_path / "venv.lock").exists()  # the lock file sits next to the venv


def _interpreter(tmp_path: Path, version: str) -> Path:
    path = tmp_path / f"python{version}"
    path.write_text(f'#!/usr/bin/env bash\nFAKE_VERSION={version} exec {tmp_path / "interpreter"} "$@"\n')
    path.chmod(0o755)
    return path


def _setup(env: dict[str, str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)], env={**env, **extra}, capture_output=True, text=True, timeout=60
    )


def test_python_of_another_version_rebuilds_the_venv_and_without_python_it_is_kept(tmp_path: Path) -> None:
    for name, text in (("interpreter", FAKE_INTERPRETER), ("uv", FAKE_UV)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    calls = tmp_path / "calls"
    calls.touch()
    venv = tmp_path / "venv"
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHON", "FAKE_GATE")},
        "SETUP_VENV": str(venv),
        "FAKE_CALLS": str(calls),
        "FAKE_UV_SCRIPT": str(tmp_path / "uv"),
    }
    first = _setup(env, PYTHON=str(_interpreter(tmp_path, "3.11")))
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"[setup] creating {venv} with {tmp_path / 'python3.11'} (Python 3.11)" in first.stdout

    rebuilt = _setup(env, PYTHON=str(_interpreter(tmp_path, "3.12")))
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    assert (
        f"[setup] rebuilding {venv}: it was made with Python 3.11, and Python 3.12 is asked for"
        in rebuilt.stdout
    )
    assert "python3.12 -m venv" in calls.read_text()
    # 3.12 is resolved against the lock's pins into a lock of its own, then synced from it
    assert f"-o {venv}/requirements-3.12.lock" in calls.read_text()
    assert calls.read_text().splitlines()[-2].startswith(f"uv pip sync --python {venv}/bin/python")

    kept = _setup(env)  # no PYTHON=: the venv keeps its interpreter
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert (
        kept.stdout.splitlines()[-1] == f"[setup] {venv} is up to date with requirements.lock (Python 3.12)"
    )


def test_a_python_that_is_not_installed_is_named() -> None:
    result = _setup(dict(os.environ), PYTHON="3.99")
    assert result.returncode == 1
    assert result.stderr.startswith(
        "[setup] error: PYTHON=3.99: Python 3.99 not found (tried python3.99 on PATH"
    )
