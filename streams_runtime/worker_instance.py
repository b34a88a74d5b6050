"""One worker instance: a process running one KafkaStreams client of the app with M threads.

Started by :class:`streams_runtime.worker.WorkerLauncher` as
``python -m streams_runtime.worker_instance --app module:attr --instance I --threads M ...``;
not meant to be run by hand (``streams-runtime worker --instances 1`` does the same with the
parallelism report).

Steps of :func:`run_instance`:
  1. load the app (same convention as the launcher) and override ``bootstrap_servers``,
     ``num_stream_threads`` and ``state_dir`` with what the launcher decided (and, with
     ``--http-port``, ``application_server``: ``--http-host`` or the app's advertised host,
     loopback by default; ``--http-bind`` sets ``application_server_bind``, which is
     ``--http-host`` when neither the command nor the app sets it (:func:`http_settings`); and
     ``$STREAMS_RUNTIME_HTTP_TOKEN``, when set, ``application_server_token``;
     ``$STREAMS_RUNTIME_FORWARDING_SECRET``, when set, ``application_server_forwarding_secret``);
  2. create the KafkaStreams client (the ``--runtime`` class), start; print every state
     transition (with the threads' tasks on RUNNING) and publish it in ``status.json``;
  3. wait for SIGTERM/SIGINT, for the client to reach ERROR (or NOT_RUNNING on its own), or for
     the launcher to disappear (the parent pid changes: an orphan closes itself);
  4. close the client within the close timeout; exit 0 when it closed after a stop request,
     1 when it failed or did not close in time.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import io
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from streams_runtime.errors import StreamsError
from streams_runtime.worker import (
    DEFAULT_RUNTIME,
    FORWARDING_SECRET_ENV,
    HTTP_TOKEN_ENV,
    STATUS_FILE,
    import_attr,
    load_app,
)

#: States after which the client does no more work (names of KafkaStreams.State).
_FAILED_STATES = {"ERROR", "PENDING_ERROR"}
_STOPPED_STATES = {"NOT_RUNNING", "PENDING_SHUTDOWN"}


def _state_name(state: object) -> str:
    return str(getattr(state, "name", state)).upper()


def _thread_tasks(streams: object, kind: str = "active_tasks") -> dict[str, list[str]]:
    """Local thread name -> its task ids of ``kind`` (``active_tasks``, or ``standby_tasks``: the
    standby and warm-up tasks), when the client exposes that metadata."""
    metadata = getattr(streams, "metadata_for_local_threads", None)
    if not callable(metadata):
        return {}
    return {
        getattr(thread, "thread_name", "?"): sorted(
            str(getattr(t, "task_id", t)) for t in getattr(thread, kind, ()) or ()
        )
        for thread in metadata()
    }


def write_status(state_dir: str, state: str, threads: dict[str, list[str]]) -> None:
    """Publish this instance's state and tasks in ``<state_dir>/status.json`` (atomic replace).

    Read by :meth:`streams_runtime.worker.WorkerLauncher.statuses`.
    """
    directory = Path(state_dir)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".status.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"pid": os.getpid(), "state": state, "threads": threads}))
    os.replace(tmp, directory / STATUS_FILE)


def http_settings(
    app_config: dict[str, Any], http_port: int | None, http_host: str | None, http_bind: str | None
) -> dict[str, str]:
    """``application_server`` and ``application_server_bind`` of an instance from its command line.

    With ``http_port``: advertise ``http_host``, else the app's host, else loopback, with that port.
    The bind: ``http_bind``, else the app's ``application_server_bind``, else ``http_host`` when it
    was given, else loopback (the config's default). An address given with ``--http-host`` is
    the one other instances forward lookups to and the console reads: bound to loopback, as
    before, the instance advertised an endpoint nothing on another host could reach (every lookup
    forwarded to it failed ``owner_unreachable``, seen on two hosts by
    ``tests/integration/test_multi_host.py``). Binding exactly that address exposes the API on
    that one interface, no wider than the advertisement already does.
    """
    out: dict[str, str] = {}
    if http_port is not None:
        app_host = str(app_config.get("application_server") or "127.0.0.1:0").rpartition(":")[0]
        host = http_host or app_host or "127.0.0.1"
        out["application_server"] = f"{host}:{http_port}"
    if http_bind:
        out["application_server_bind"] = http_bind
    elif http_host and http_port is not None and not app_config.get("application_server_bind"):
        out["application_server_bind"] = http_host.strip("[]")
    return out


def run_instance(
    app_spec: str,
    *,
    index: int,
    threads: int,
    bootstrap_servers: str,
    state_dir: str,
    runtime: str = DEFAULT_RUNTIME,
    close_timeout: float = 30.0,
    http_port: int | None = None,
    http_host: str | None = None,
    http_bind: str | None = None,
) -> int:
    """Run one instance until told to stop (steps in the module docstring); return the exit code."""
    prefix = f"[instance {index}]"

    def say(line: str) -> None:
        print(f"{prefix} {line}", flush=True)

    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda s, f: stop.set())
    parent = os.getppid()

    # Step 1
    app = load_app(app_spec)
    config = {
        **app.config,
        "bootstrap_servers": bootstrap_servers,
        "num_stream_threads": threads,
        "state_dir": state_dir,
    }
    config.update(http_settings(app.config, http_port, http_host, http_bind))
    if os.environ.get(HTTP_TOKEN_ENV):
        config["application_server_token"] = os.environ[HTTP_TOKEN_ENV]
    if os.environ.get(FORWARDING_SECRET_ENV):
        config["application_server_forwarding_secret"] = os.environ[FORWARDING_SECRET_ENV]
    # Step 2
    streams_class = import_attr(runtime)
    streams = streams_class(app.topology, config)
    states: list[str] = []
    set_restore_listener = getattr(streams, "set_global_state_restore_listener", None)
    if callable(set_restore_listener):  # restore and rebuild progress: bars when alone on a terminal
        from streams_runtime.tools.progress import PROGRESS_ENV, RestoreProgressDisplay

        set_restore_listener(RestoreProgressDisplay(bars=os.environ.get(PROGRESS_ENV) == "1", say=say))

    def on_state(new: object, old: object) -> None:
        states.append(_state_name(new))
        say(f"state {_state_name(old)} -> {_state_name(new)}")
        running = _state_name(new) == "RUNNING"
        threads = _thread_tasks(streams) if running else {}
        for name, tasks in threads.items():
            say(f"{name}: {len(tasks)} active task(s) {' '.join(tasks)}".rstrip())
        for name, tasks in (_thread_tasks(streams, "standby_tasks") if running else {}).items():
            say(f"{name}: {len(tasks)} standby task(s) {' '.join(tasks)}".rstrip())
        write_status(state_dir, _state_name(new), threads)
        if _state_name(new) in _FAILED_STATES:
            stop.set()

    listen = getattr(streams, "set_state_listener", None)
    if callable(listen):
        listen(on_state)
    streams.start()
    say(f"started {app.application_id} with {threads} thread(s), state dir {state_dir}")
    if http_port is not None:
        say(f"HTTP API on http://{config['application_server']} (docs at /docs, metrics at /metrics)")
    # Step 3
    while not stop.wait(0.2):
        if os.getppid() != parent:
            say("launcher is gone; closing")
            break
        if _state_name(getattr(streams, "state", "")) in _FAILED_STATES:
            break
    states.append(_state_name(getattr(streams, "state", "")))
    failed = any(s in _FAILED_STATES for s in states)
    # Step 4
    closed = streams.close(timeout=close_timeout)
    if closed is False:
        say(f"did not close within {close_timeout}s")
        return 1
    if failed:
        say("closed after an error")
        return 1
    say("closed cleanly")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the launcher's arguments and run the instance."""
    parser = argparse.ArgumentParser(prog="streams_runtime.worker_instance")
    parser.add_argument("--app", required=True)
    parser.add_argument("--instance", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--runtime", default=DEFAULT_RUNTIME)
    parser.add_argument("--close-timeout", type=float, default=30.0)
    parser.add_argument("--http-port", type=int, default=None)
    parser.add_argument("--http-host", default=None)
    parser.add_argument("--http-bind", default=None)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    # an operator's (or a test's) view of a stuck instance: SIGUSR1 prints every thread's stack
    # to stderr (not where stderr has no file descriptor: run in-process under a capture)
    with contextlib.suppress(ValueError, AttributeError, io.UnsupportedOperation):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format=f"%(asctime)s %(levelname)s [instance {args.instance}] %(name)s: %(message)s",
    )
    try:
        return run_instance(
            args.app,
            index=args.instance,
            threads=args.threads,
            bootstrap_servers=args.bootstrap_servers,
            state_dir=args.state_dir,
            runtime=args.runtime,
            close_timeout=args.close_timeout,
            http_port=args.http_port,
            http_host=args.http_host,
            http_bind=args.http_bind,
        )
    except StreamsError as exc:
        print(f"[instance {args.instance}] error: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
