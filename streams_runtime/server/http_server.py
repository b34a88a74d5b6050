"""HttpServer: uvicorn serving :func:`~.app.create_app` in a background thread.

Started by ``KafkaStreams.start()`` (after its threads) when ``application_server`` is set, on
that endpoint's port, bound to ``application_server_bind`` (``127.0.0.1`` by default: set it to
``0.0.0.0`` deliberately to serve other hosts, ideally with ``application_server_token``);
stopped by ``close()``. Steps of :meth:`HttpServer.start_for`:
  1. build the app for the client;
  2. run ``uvicorn.Server`` with the request limits of :mod:`.limits` on a daemon thread
     (uvicorn installs no signal handlers off the main thread: the worker keeps its own SIGTERM
     handling);
  3. wait until uvicorn listens; if it cannot bind (port taken) raise a StreamsError naming the
     key, the address and the port;
  4. start the console's history sampler (:mod:`.history`), stopped first by :meth:`stop`.

Before step 1, an endpoint advertised on another address than loopback while the server binds
loopback is logged at WARNING (:func:`unreachable_advertisement`): other instances forward lookups
to the advertised endpoint, where nothing listens for them.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from typing import Any

import uvicorn

from streams_runtime.errors import StreamsError
from streams_runtime.server.app import create_app
from streams_runtime.server.figures import Figures
from streams_runtime.server.history import Sampler
from streams_runtime.server.limits import HttpLimits, protocol_for

log = logging.getLogger("streams_runtime.server")

START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 5.0


def _loopback(host: str) -> bool:
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: resolved by the other instances, to their idea of this host


def unreachable_advertisement(endpoint: str, bind: str) -> str | None:
    """Why ``endpoint`` (``application_server``) cannot be reached from another host while the
    server binds ``bind``; None when it can be (or when this cannot tell: a bind to another
    address than loopback, say behind a proxy, is the operator's choice)."""
    host = endpoint.rpartition(":")[0]
    if not _loopback(bind) or _loopback(host):
        return None
    return (
        f"application_server advertises {endpoint} to the other instances, but the HTTP server binds "
        f"{bind} (application_server_bind), a loopback address: from other hosts nothing answers "
        f"there, and every lookup forwarded to this instance fails (owner_unreachable). Bind "
        f"{host.strip('[]')} or 0.0.0.0 (application_server_bind; the worker's --http-bind)"
    )


class HttpServer:
    """See the module docstring."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        self.app = app
        self.host = host
        self.port = port
        limits: HttpLimits = app.state.limits
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            # uvicorn's h11 protocol: its own bound of the request head, plus .limits' guards
            http=protocol_for(limits),
            h11_max_incomplete_event_size=limits.max_header_bytes,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=f"http-server-{port}", daemon=True)
        self._sampler = Sampler(app.state.history, Figures(app.state.streams).read)

    @classmethod
    def start_for(cls, streams: Any) -> HttpServer:
        endpoint = streams.config.application_server
        port = int(endpoint.rpartition(":")[2])
        unreachable = unreachable_advertisement(endpoint, streams.config.application_server_bind)
        if unreachable:
            log.warning(unreachable)
        server = cls(create_app(streams), streams.config.application_server_bind, port)  # Step 1
        server.start()
        return server

    def start(self) -> None:
        self._thread.start()  # Step 2
        deadline = time.monotonic() + START_TIMEOUT_S  # Step 3
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise StreamsError(
                    f"application_server: the HTTP server could not listen on {self.host}:{self.port} "
                    f"(application_server_bind={self.host!r}); is the port taken?"
                )
            time.sleep(0.02)
        self._sampler.start()  # Step 4: the console's history (a sample every few seconds)
        log.info("HTTP API on http://%s:%d (docs at /docs)", self.host, self.port)

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and self._server.started

    def stop(self) -> None:
        self._sampler.stop()
        self._server.should_exit = True
        if self._thread.ident is not None:
            self._thread.join(STOP_TIMEOUT_S)
        self.app.state.http.close()
