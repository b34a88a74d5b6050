"""RocksDB store cost against the number of stores in one process (no broker).

One task's store per partition: ``--records`` get+put pairs (a count per key, as a KTable
count does) spread over ``--stores`` RocksDBStores opened in this process, with a commit
(``flush`` + ``commit_offset`` on every store) every ``--commit-every`` records. Prints the CPU
of the whole process (all threads, RocksDB's flush and compaction threads included) per record,
for each store count side by side with the first one, so growth with the number of tasks shows
as a ratio.

Run:  .venv/bin/python bench/store_scaling.py [--stores 8,64,96] [--records 300000] [--keys 10000]
"""

from __future__ import annotations

import argparse
import resource
import struct
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streams_runtime.state.internals.rocksdb_store import RocksDBStore  # noqa: E402

LONG = struct.Struct(">q")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(stores: int, records: int, keys: int, commit_every: int, root: str) -> tuple[float, float]:
    """Return (CPU us, wall us) per record for ``stores`` stores."""
    opened = []
    for i in range(stores):
        store = RocksDBStore("counts")
        context = types.SimpleNamespace(state_dir=f"{root}/{stores}/task-{i}", register=lambda *a, **k: None)
        store.init(context)
        opened.append(store)
    cpu0, wall0 = _cpu(), time.perf_counter()
    for n in range(records):
        k = n % keys
        store, key = opened[k % stores], b"user-%d" % k
        raw = store.get(key)
        store.put(key, LONG.pack((LONG.unpack(raw)[0] if raw else 0) + 1))
        if n % commit_every == commit_every - 1:
            for s in opened:
                s.flush()
                s.commit_offset(n)
    cpu, wall = _cpu() - cpu0, time.perf_counter() - wall0
    for store in opened:
        store.close()
    return cpu / records * 1e6, wall / records * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stores", default="8,64,96", help="comma-separated store counts")
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--commit-every", type=int, default=50_000)
    args = parser.parse_args(argv)
    counts = [int(s) for s in args.stores.split(",")]
    print(f"{'stores':>6} {'cpu_us/rec':>10} {'wall_us/rec':>11} {'cpu vs first':>12}")
    first = None
    with tempfile.TemporaryDirectory() as root:
        for count in counts:
            cpu, wall = run(count, args.records, args.keys, args.commit_every, root)
            first = first or cpu
            print(f"{count:>6} {cpu:>10.2f} {wall:>11.2f} {cpu / first:>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
