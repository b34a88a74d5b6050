"""An instance must be reachable where it advertises itself: other instances forward lookups to its
``application_server``, and the console reads it there.

On two hosts (``tests/integration/test_multi_host.py``), an instance advertising its host's address
while its HTTP server bound loopback was reachable by no other host: every lookup forwarded to it
failed ``owner_unreachable``. The worker now binds the address given with ``--http-host`` when no
bind address is given (:func:`http_settings`), and a server advertising another address than
loopback while bound to loopback says so at start (:func:`unreachable_advertisement`).
"""

from __future__ import annotations

import logging

import pytest

from streams_runtime.server import http_server
from streams_runtime.server.http_server import HttpServer, unreachable_advertisement
from streams_runtime.worker_instance import http_settings
from tests.unit.query.fakes import FakeClient, FakeThread


@pytest.mark.parametrize(
    ("endpoint", "bind"),
    [
        ("10.0.0.2:7070", "127.0.0.1"),
        ("worker-1.internal:7070", "127.0.0.1"),
        ("10.0.0.2:7070", "localhost"),
        ("[fd00::2]:7070", "::1"),
    ],
)
def test_an_address_of_the_network_advertised_while_bound_to_loopback_is_unreachable(
    endpoint: str, bind: str
) -> None:
    reason = unreachable_advertisement(endpoint, bind)
    assert reason is not None
    assert endpoint in reason and "owner_unreachable" in reason and "application_server_bind" in reason


@pytest.mark.parametrize(
    ("endpoint", "bind"),
    [
        ("127.0.0.1:7070", "127.0.0.1"),
        ("127.0.0.2:7070", "127.0.0.1"),  # loopback advertised: one host only, reachable there
        ("localhost:7070", "127.0.0.1"),
        ("10.0.0.2:7070", "10.0.0.2"),
        ("10.0.0.2:7070", "0.0.0.0"),
        ("worker-1.internal:7070", "::"),
        ("203.0.113.9:7070", "10.0.0.2"),  # bound elsewhere than loopback: a proxy's business
    ],
)
def test_a_reachable_or_undecidable_advertisement_is_fine(endpoint: str, bind: str) -> None:
    assert unreachable_advertisement(endpoint, bind) is None


def test_the_server_warns_at_start_when_its_advertised_endpoint_is_unreachable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    started: list[tuple[str, int]] = []
    monkeypatch.setattr(http_server, "create_app", lambda streams: streams)
    monkeypatch.setattr(
        HttpServer, "__init__", lambda self, app, host, port: started.append((host, port)) or None
    )
    monkeypatch.setattr(HttpServer, "start", lambda self: None)
    client = FakeClient([FakeThread("t1", [])], endpoint="10.0.0.2:7070")
    client.config = client.config.with_overrides(application_server_bind="127.0.0.1")
    with caplog.at_level(logging.WARNING, logger="streams_runtime.server"):
        HttpServer.start_for(client)
    assert started == [("127.0.0.1", 7070)]
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "advertises 10.0.0.2:7070" in caplog.records[0].getMessage()

    caplog.clear()
    client.config = client.config.with_overrides(application_server_bind="10.0.0.2")
    with caplog.at_level(logging.WARNING, logger="streams_runtime.server"):
        HttpServer.start_for(client)
    assert caplog.records == []


def test_the_worker_binds_the_host_it_is_told_to_advertise() -> None:
    assert http_settings({}, 7070, "10.0.0.2", None) == {
        "application_server": "10.0.0.2:7070",
        "application_server_bind": "10.0.0.2",
    }
    assert http_settings({}, 7070, "[fd00::2]", None)["application_server_bind"] == "fd00::2"


def test_a_bind_given_on_the_command_line_or_by_the_app_wins() -> None:
    assert http_settings({}, 7070, "10.0.0.2", "0.0.0.0")["application_server_bind"] == "0.0.0.0"
    app = {"application_server_bind": "0.0.0.0"}
    assert "application_server_bind" not in http_settings(app, 7070, "10.0.0.2", None)  # the app's stays


def test_without_an_advertised_host_the_bind_stays_loopback() -> None:
    assert http_settings({}, 7070, None, None) == {"application_server": "127.0.0.1:7070"}
    app = {"application_server": "10.0.0.2:0"}  # the app's own host: its own bind decides
    assert http_settings(app, 7070, None, None) == {"application_server": "10.0.0.2:7070"}
    assert http_settings({}, None, None, "0.0.0.0") == {"application_server_bind": "0.0.0.0"}
