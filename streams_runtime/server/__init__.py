"""The worker's HTTP API: interactive queries, Prometheus metrics, liveness and readiness.

Served by :class:`~streams_runtime.server.http_server.HttpServer` (uvicorn in a background
thread) for a KafkaStreams client whose ``application_server`` is set, bound to
``application_server_bind`` (loopback by default). The app (:func:`~.app.create_app`) keeps the
client in ``app.state.streams``; routers of other modules use it and the ``require_token``
dependency of :mod:`.auth`. fastapi, starlette, uvicorn, httpx and prometheus_client are imported
under this package only (an import-linter contract in pyproject.toml).
"""
