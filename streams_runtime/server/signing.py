"""Signatures of requests forwarded between instances, and of their answers.

An instance that gets a lookup for a key another instance owns forwards it to the owner's
advertised endpoint. The client's credential never goes with it: the request is signed with
the instances' shared secret (``application_server_forwarding_secret``), and the owner signs its
answer, so neither side trusts an endpoint merely because a group member advertised it.

Request (headers set by :meth:`ForwardingSigner.sign_request`):

* ``X-Streams-Forwarded-By``: the forwarding instance's endpoint;
* ``X-Streams-Timestamp``: milliseconds since the epoch when it was signed;
* ``X-Streams-Nonce``: 16 random bytes, hex;
* ``X-Streams-Signature``: ``v2=`` HMAC-SHA256, hex, over a canonical text of the version, the
  application id, the method, the request target (raw path and query, exactly as sent), the
  SHA-256 of the body, the timestamp, the nonce, the sender's and the receiver's endpoints.

The receiver (:meth:`ForwardingSigner.verify_request`):

1. checks the signature in constant time against its own application id and its own endpoint as
   receiver: a request signed for another instance, or by a member of another application that
   shares the secret, does not verify here;
2. refuses a timestamp more than ``window_s`` away from its clock
   (``application_server_forwarding_window_ms``, 30 s by default), or earlier than the moment this
   signer was created: a request captured before the receiver restarted is refused even though the
   restarted process remembers no nonce;
3. accepts each nonce once within twice the window (a replayed request is refused).

Answer: ``X-Streams-Response-Signature: v2=`` HMAC over the application id, the request's
signature, the status, the content type and the SHA-256 of the body
(:meth:`ForwardingSigner.sign_response`); the forwarder relays an answer only when
:meth:`ForwardingSigner.verify_response` accepts it. An answer cannot be moved to another request:
it is bound to that request's signature, which includes its nonce.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping

FORWARDED_BY = "X-Streams-Forwarded-By"
TIMESTAMP = "X-Streams-Timestamp"
NONCE = "X-Streams-Nonce"
SIGNATURE = "X-Streams-Signature"
RESPONSE_SIGNATURE = "X-Streams-Response-Signature"
#: headers whose presence marks a request as forwarded by an instance (it must then verify)
SIGNED_HEADERS = (TIMESTAMP, NONCE, SIGNATURE)

VERSION = "v2"
DEFAULT_WINDOW_S = 30.0
#: most nonces remembered at once; beyond it, forwarded requests are refused until some expire
MAX_NONCES = 100_000


class SignatureError(Exception):
    """A forwarded request or an answer whose signature does not check (the message says why)."""


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _lines(*parts: str) -> bytes:
    return "\n".join(parts).encode()


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return value if value is not None else headers.get(name.lower())


class ForwardingSigner:
    """Signs and verifies forwarded requests and their answers with one shared secret."""

    def __init__(
        self,
        secret: str,
        application_id: str,
        window_s: float = DEFAULT_WINDOW_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not secret:
            raise ValueError("a forwarding secret is required")
        if not application_id:
            raise ValueError("forwarded requests are signed for an application id; none is set")
        self._key = secret.encode()
        self.application_id = application_id
        self.window_s = window_s
        self._clock = clock
        #: requests signed before this moment are refused (Step 2 of verify_request)
        self.started_ms = int(clock() * 1000)
        self._seen: dict[str, float] = {}  # nonce -> when it may be forgotten
        self._lock = threading.Lock()

    def _mac(self, text: bytes) -> str:
        return f"{VERSION}={hmac.new(self._key, text, hashlib.sha256).hexdigest()}"

    def _request_text(
        self, method: str, target: str, digest: str, timestamp: str, nonce: str, sender: str, receiver: str
    ) -> bytes:
        return _lines(
            VERSION,
            "request",
            self.application_id,
            method.upper(),
            target,
            digest,
            timestamp,
            nonce,
            sender,
            receiver,
        )

    # ----------------------------------------------------------------- requests
    def sign_request(
        self, method: str, target: str, body: bytes, sender: str, receiver: str
    ) -> dict[str, str]:
        """The headers forwarding ``method target`` (raw path and query) from ``sender`` to ``receiver``."""
        timestamp = str(int(self._clock() * 1000))
        nonce = secrets.token_hex(16)
        signature = self._mac(
            self._request_text(method, target, body_digest(body), timestamp, nonce, sender, receiver)
        )
        return {FORWARDED_BY: sender, TIMESTAMP: timestamp, NONCE: nonce, SIGNATURE: signature}

    def verify_request(
        self, method: str, target: str, body: bytes, headers: Mapping[str, str], receiver: str
    ) -> str:
        """The sender's endpoint when the request checks (module docstring, steps 1-3); else
        :class:`SignatureError`."""
        sender = _header(headers, FORWARDED_BY) or ""
        timestamp = _header(headers, TIMESTAMP) or ""
        nonce = _header(headers, NONCE) or ""
        given = _header(headers, SIGNATURE) or ""
        if not (timestamp and nonce and given):
            raise SignatureError(f"a forwarded request needs {TIMESTAMP}, {NONCE} and {SIGNATURE}")
        if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 15:
            raise SignatureError(f"{TIMESTAMP} must be milliseconds since the epoch")
        if not nonce.isascii() or not 16 <= len(nonce) <= 64:
            raise SignatureError(f"{NONCE} must be 16 to 64 characters")
        expected = self._mac(  # Step 1
            self._request_text(method, target, body_digest(body), timestamp, nonce, sender, receiver)
        )
        if not hmac.compare_digest(expected.encode(), given.encode(errors="replace")):
            raise SignatureError(
                "the forwarding signature does not check (another secret, another application, "
                "another receiver, or a changed request)"
            )
        now = self._clock()  # Step 2
        if abs(now - int(timestamp) / 1000) > self.window_s:
            raise SignatureError(f"the forwarded request is outside the {self.window_s:g}s validity window")
        if int(timestamp) < self.started_ms:
            raise SignatureError("the forwarded request was signed before this instance started")
        self._remember(nonce, now)  # Step 3
        return sender

    def _remember(self, nonce: str, now: float) -> None:
        with self._lock:
            if self._seen.get(nonce, 0.0) > now:
                raise SignatureError("the forwarded request was already answered (replayed nonce)")
            if len(self._seen) >= MAX_NONCES or len(self._seen) % 1024 == 1023:
                self._seen = {n: t for n, t in self._seen.items() if t > now}
            if len(self._seen) >= MAX_NONCES:
                raise SignatureError("too many forwarded requests in the validity window")
            self._seen[nonce] = now + 2 * self.window_s

    # ----------------------------------------------------------------- answers
    def _response_text(self, request_signature: str, status: int, content_type: str, body: bytes) -> bytes:
        return _lines(
            VERSION,
            "response",
            self.application_id,
            request_signature,
            str(status),
            content_type,
            body_digest(body),
        )

    def sign_response(self, request_signature: str, status: int, content_type: str, body: bytes) -> str:
        """The value of ``X-Streams-Response-Signature`` for this answer to that request."""
        return self._mac(self._response_text(request_signature, status, content_type, body))

    def verify_response(
        self, request_signature: str, status: int, content_type: str, body: bytes, given: str | None
    ) -> None:
        """Nothing when the owner's answer proves the secret; else :class:`SignatureError`."""
        if not given:
            raise SignatureError(f"the answer carries no {RESPONSE_SIGNATURE}")
        expected = self.sign_response(request_signature, status, content_type, body)
        if not hmac.compare_digest(expected.encode(), given.encode(errors="replace")):
            raise SignatureError("the answer's signature does not check (the endpoint lacks the secret)")
