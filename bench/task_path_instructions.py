"""Instructions per record of one task's path (``bench/task_path.py``), counted by valgrind.

Time on a shared 2-core machine swings by 20-30%; the number of instructions a run executes does
not. This runs ``task_path.run_runtime`` for one workload under valgrind's callgrind twice, with
``--small`` and ``--large`` records, and prints (instructions(large) - instructions(small)) /
(large - small): the per-record cost, with start-up and imports cancelled out. Two checkouts can
be compared by running it in each (``--tree``). Needs valgrind (Debian: ``apt install valgrind``);
a run takes about a minute. The child runs with ``PYTHONHASHSEED=0``: string hashing with a random
seed moves the count by about 1.3% between identical runs. It runs with the cyclic garbage collector
off: whether one full collection falls inside the larger run or not (a few more objects made at
import time decide it) moved the W1 count by 14% with no change to the per-record path.

Run:  .venv/bin/python bench/task_path_instructions.py [--workload W2|W1|W3] [--small 2000] [--large 6000]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import gc, sys, tempfile
gc.disable()
sys.path.insert(0, {tree!r}); sys.path.insert(0, {tree!r} + "/bench")
import task_path
data = task_path.w3_records({n}, 8) if {workload!r} == "W3" else task_path.records({n}, 1000, 8)
with tempfile.TemporaryDirectory() as root:
    task_path.run_runtime({workload!r}, data, 10**9, root)
"""


def instructions(tree: Path, workload: str, records: int) -> int:
    """Instructions valgrind counted for one run of ``records`` records."""
    code = _CHILD.format(tree=str(tree), n=records, workload=workload)
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"valgrind reported no instruction count:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=("W1", "W2", "W3"), default="W2")
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--large", type=int, default=6000)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to measure")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt install valgrind)")
    if args.large <= args.small:
        raise SystemExit("--large must be above --small")
    small = instructions(args.tree, args.workload, args.small)
    large = instructions(args.tree, args.workload, args.large)
    per_record = (large - small) / (args.large - args.small)
    print(f"{args.workload} {args.tree}: {per_record:,.0f} instructions per record")


if __name__ == "__main__":
    main()
