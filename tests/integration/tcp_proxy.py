"""A loopback TCP proxy for outage tests: forwards 127.0.0.1:<port> to a target port until cut.

``cut()`` closes every forwarded connection and refuses new ones (accepted, then closed at once)
until ``heal()``: to the clients behind it the broker is unreachable, as in a network cut.
"""

from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self._target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._cut = False
        self._closed = False
        threading.Thread(target=self._accept, name="tcp-proxy-accept", daemon=True).start()

    def set_target(self, port: int) -> None:
        self._target = (self._target[0], port)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self._cut:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self._target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._sockets.update((client, upstream))
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                self._close(s)

    def _close(self, s: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(s)
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def cut(self) -> None:
        self._cut = True
        with self._lock:
            sockets = list(self._sockets)
        for s in sockets:
            self._close(s)

    def heal(self) -> None:
        self._cut = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        self._listener.close()
