"""scripts/setup.sh run twice at once: the second waits for the first's lock, then reuses its venv.

No real sync (one takes ~40 s): ``SETUP_VENV`` points the script at a temporary virtualenv whose
``bin/python`` and ``bin/uv`` are stand-ins. They record every call, and the stand-in uv's
``pip sync`` blocks on a FIFO until the test writes to it, so the first setup is held "mid-sync"
for as long as the test wants. Without the lock the second setup finds no stamp and starts a sync
of its own: it never reports waiting, and two syncs are recorded.
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
  "pip sync") read -r _ <"$FAKE_GATE" ;;
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
    assert second.lines[-1] == "[setup] .venv is up to date with requirements.lock (set up by the other run)"
    assert len(syncs()) == 1  # the second reused what the first built
    assert (venv / ".lock-stamp").read_text().strip()
    assert (tmp_path / "venv.lock").exists()  # the lock file sits next to the venv
