"""Signatures of forwarded requests and their answers: what verifies, and every way it must not."""

from __future__ import annotations

import pytest

from streams_runtime.server.signing import (
    FORWARDED_BY,
    NONCE,
    SIGNATURE,
    TIMESTAMP,
    ForwardingSigner,
    SignatureError,
)

SECRET = "the-instances-shared-secret-of-32-bytes"
APP = "counts-app"
TARGET = "/stores/counts/keys/a%2Fb%3Fc?allow_stale=true"


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _pair(clock: Clock | None = None) -> tuple[ForwardingSigner, ForwardingSigner]:
    clock = clock or Clock()
    return ForwardingSigner(SECRET, APP, clock=clock), ForwardingSigner(SECRET, APP, clock=clock)


def test_should_verify_a_request_signed_with_the_same_secret_and_name_its_sender():
    sender, receiver = _pair()
    headers = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    assert headers[FORWARDED_BY] == "a:1" and headers[SIGNATURE].startswith("v2=")
    assert receiver.verify_request("GET", TARGET, b"", headers, "b:2") == "a:1"
    # header names are case-insensitive on the wire: lower-case ones verify too
    again = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    assert (
        receiver.verify_request("GET", TARGET, b"", {k.lower(): v for k, v in again.items()}, "b:2") == "a:1"
    )


def test_should_refuse_a_request_signed_with_another_secret():
    clock = Clock()
    forger = ForwardingSigner("not-the-shared-secret", APP, clock=clock)
    receiver = ForwardingSigner(SECRET, APP, clock=clock)
    headers = forger.sign_request("GET", TARGET, b"", "a:1", "b:2")
    with pytest.raises(SignatureError, match="does not check"):
        receiver.verify_request("GET", TARGET, b"", headers, "b:2")


@pytest.mark.parametrize(
    ("method", "target", "body", "receiver"),
    [
        ("GET", "/stores/counts/keys/a%2Fb%3Fd?allow_stale=true", b"", "b:2"),  # another key
        ("GET", "/stores/counts/keys/a%2Fb%3Fc?allow_stale=false", b"", "b:2"),  # another query
        ("GET", "/stores/counts/keys/a%2Fb%3Fc", b"", "b:2"),  # query dropped
        ("GET", TARGET, b"x", "b:2"),  # a body added
        ("POST", TARGET, b"", "b:2"),  # another method
        ("GET", TARGET, b"", "c:3"),  # sent to another instance (a replay elsewhere)
    ],
)
def test_should_refuse_a_tampered_request(method, target, body, receiver):
    sender, verifier = _pair()
    headers = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    with pytest.raises(SignatureError, match="does not check"):
        verifier.verify_request(method, target, body, headers, receiver)


def test_should_refuse_a_changed_sender_timestamp_or_nonce():
    sender, receiver = _pair()
    for name, value in ((FORWARDED_BY, "evil:1"), (TIMESTAMP, "1700000000001"), (NONCE, "ab" * 16)):
        headers = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
        headers[name] = value
        with pytest.raises(SignatureError, match="does not check"):
            receiver.verify_request("GET", TARGET, b"", headers, "b:2")


def test_should_sign_the_body_digest():
    sender, receiver = _pair()
    headers = sender.sign_request("POST", TARGET, b'{"a": 1}', "a:1", "b:2")
    assert receiver.verify_request("POST", TARGET, b'{"a": 1}', headers, "b:2") == "a:1"
    headers = sender.sign_request("POST", TARGET, b'{"a": 1}', "a:1", "b:2")
    with pytest.raises(SignatureError):
        receiver.verify_request("POST", TARGET, b'{"a": 2}', headers, "b:2")


@pytest.mark.parametrize("skew", [-31.0, 31.0, 3600.0])
def test_should_refuse_a_request_outside_the_validity_window(skew):
    clock = Clock()
    sender = ForwardingSigner(SECRET, APP, clock=clock)
    receiver = ForwardingSigner(SECRET, APP, clock=clock)
    headers = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    clock.now += skew
    with pytest.raises(SignatureError, match="validity window"):
        receiver.verify_request("GET", TARGET, b"", headers, "b:2")


def test_should_accept_a_request_within_the_window_once_and_refuse_its_replay():
    clock = Clock()
    sender = ForwardingSigner(SECRET, APP, clock=clock)
    receiver = ForwardingSigner(SECRET, APP, clock=clock)
    headers = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    clock.now += 10.0
    assert receiver.verify_request("GET", TARGET, b"", headers, "b:2") == "a:1"
    with pytest.raises(SignatureError, match="replayed"):
        receiver.verify_request("GET", TARGET, b"", dict(headers), "b:2")
    clock.now += 19.0  # still inside the window: refused as a replay; later the window refuses it
    with pytest.raises(SignatureError, match="replayed"):
        receiver.verify_request("GET", TARGET, b"", dict(headers), "b:2")
    clock.now += 120.0
    with pytest.raises(SignatureError, match="validity window"):
        receiver.verify_request("GET", TARGET, b"", dict(headers), "b:2")


@pytest.mark.parametrize(
    "broken",
    [
        {},
        {TIMESTAMP: "soon", NONCE: "ab" * 16, SIGNATURE: "v2=00"},
        {TIMESTAMP: "1" * 40, NONCE: "ab" * 16, SIGNATURE: "v2=00"},
        {TIMESTAMP: "1700000000000", NONCE: "short", SIGNATURE: "v2=00"},
        {TIMESTAMP: "1700000000000", NONCE: "ab" * 16, SIGNATURE: "é"},
        {TIMESTAMP: "1700000000000", NONCE: "ab" * 16},
    ],
)
def test_should_refuse_missing_or_malformed_signature_headers(broken):
    _, receiver = _pair()
    with pytest.raises(SignatureError):
        receiver.verify_request("GET", TARGET, b"", broken, "b:2")


def test_should_verify_an_answer_only_for_its_own_request_status_type_and_body():
    sender, owner = _pair()
    request = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")[SIGNATURE]
    other_request = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")[SIGNATURE]
    body = b'{"value": 3}'
    signed = owner.sign_response(request, 200, "application/json", body)
    sender.verify_response(request, 200, "application/json", body, signed)
    for args in (
        (other_request, 200, "application/json", body),  # moved to another request
        (request, 404, "application/json", body),
        (request, 200, "text/plain", body),
        (request, 200, "application/json", b'{"value": 999999}'),
    ):
        with pytest.raises(SignatureError):
            sender.verify_response(*args, signed)
    with pytest.raises(SignatureError, match="carries no"):
        sender.verify_response(request, 200, "application/json", body, None)
    forged = ForwardingSigner("a-guess-at-the-secret", APP).sign_response(
        request, 200, "application/json", body
    )
    with pytest.raises(SignatureError, match="lacks the secret"):
        sender.verify_response(request, 200, "application/json", body, forged)


def test_should_need_a_secret():
    with pytest.raises(ValueError):
        ForwardingSigner("", APP)
    with pytest.raises(ValueError, match="application id"):
        ForwardingSigner(SECRET, "")


def test_should_refuse_a_request_signed_for_another_application_under_the_same_secret():
    clock = Clock()
    other_app = ForwardingSigner(SECRET, "another-app", clock=clock)
    receiver = ForwardingSigner(SECRET, APP, clock=clock)
    headers = other_app.sign_request("GET", TARGET, b"", "a:1", "b:2")
    with pytest.raises(SignatureError, match="another application"):
        receiver.verify_request("GET", TARGET, b"", headers, "b:2")
    # nor does an answer signed by the other application verify for this one's request
    mine = ForwardingSigner(SECRET, APP, clock=clock).sign_request("GET", TARGET, b"", "a:1", "b:2")
    answer = other_app.sign_response(mine[SIGNATURE], 200, "application/json", b"{}")
    with pytest.raises(SignatureError, match="does not check"):
        receiver.verify_response(mine[SIGNATURE], 200, "application/json", b"{}", answer)


def test_should_refuse_a_request_signed_before_the_receiver_started():
    """A restarted receiver remembers no nonce: what was signed before it started is refused,
    even inside the window; what is signed afterwards verifies."""
    clock = Clock()
    sender = ForwardingSigner(SECRET, APP, clock=clock)
    captured = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    assert ForwardingSigner(SECRET, APP, clock=clock).verify_request("GET", TARGET, b"", captured, "b:2")
    clock.now += 5.0
    restarted = ForwardingSigner(SECRET, APP, clock=clock)
    with pytest.raises(SignatureError, match="before this instance started"):
        restarted.verify_request("GET", TARGET, b"", dict(captured), "b:2")
    fresh = sender.sign_request("GET", TARGET, b"", "a:1", "b:2")
    assert restarted.verify_request("GET", TARGET, b"", fresh, "b:2") == "a:1"


def test_should_take_the_window_from_the_config():
    from streams_runtime.config import StreamsConfig
    from streams_runtime.server.forwarding import signer_for

    config = StreamsConfig(
        {
            "application_id": APP,
            "application_server_forwarding_secret": SECRET,
            "application_server_forwarding_window_ms": 5_000,
        }
    )
    signer = signer_for(config)
    assert signer is not None and signer.window_s == 5.0 and signer.application_id == APP


@pytest.mark.parametrize("bad", ["", "short", "x" * 31, "é" * 15, 12345])
def test_should_reject_a_short_forwarding_secret_naming_the_key(bad):
    from streams_runtime.config import StreamsConfig
    from streams_runtime.errors import StreamsConfigError

    with pytest.raises(StreamsConfigError, match="application_server_forwarding_secret") as raised:
        StreamsConfig({"application_id": "a", "application_server_forwarding_secret": bad})
    assert "at least 32 bytes" in str(raised.value)
    assert str(bad) not in str(raised.value) or bad == ""  # the secret is not echoed
    config = StreamsConfig({"application_id": "a", "application_server_forwarding_secret": "x" * 32})
    assert config["application_server_forwarding_secret"] == "x" * 32


@pytest.mark.parametrize("key", ["application_server_forwarding_secret", "application_server_token"])
def test_should_reject_every_value_shipped_in_the_repository_naming_the_key(key):
    from streams_runtime.config import SHIPPED_SECRETS, StreamsConfig
    from streams_runtime.errors import StreamsConfigError

    assert "change-me-in-production-too" in SHIPPED_SECRETS  # the former compose default
    for value in SHIPPED_SECRETS:
        with pytest.raises(StreamsConfigError, match=key) as raised:
            StreamsConfig({"application_id": "a", key: value})
        assert value not in str(raised.value)


def test_should_reject_a_long_shipped_secret_for_being_shipped(monkeypatch):
    from streams_runtime import config as config_module
    from streams_runtime.errors import StreamsConfigError

    shipped = "an-example-secret-long-enough-to-pass-the-length-check"
    key = "application_server_forwarding_secret"
    assert config_module.StreamsConfig({"application_id": "a", key: shipped})[key] == shipped
    monkeypatch.setattr(config_module, "SHIPPED_SECRETS", config_module.SHIPPED_SECRETS | {shipped})
    with pytest.raises(StreamsConfigError, match=key) as raised:
        config_module.StreamsConfig({"application_id": "a", key: shipped})
    assert "shipped in the streams-runtime repository" in str(raised.value)
