"""The adversarial suite's loopback listeners and servers: a TCP probe's target, a tiny HTTP
server with a fixed answer, and many connections opened at once (the floods' sockets)."""

import errno
import selectors
import socket
import threading
import time


class Listener:
    """A TCP listener on 127.0.0.1 that accepts and closes connections (a TCP probe's target)."""

    def __init__(self, backlog=128, accept=True):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(backlog)
        self.port = self.sock.getsockname()[1]
        self.target = f"127.0.0.1:{self.port}"
        self.stopped = threading.Event()
        self.thread = None
        if accept:
            self.sock.settimeout(0.2)
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self):
        while not self.stopped.is_set():
            try:
                self.sock.accept()[0].close()
            except OSError:
                pass

    def close(self):
        self.stopped.set()
        if self.thread:
            self.thread.join(1)
        self.sock.close()


class TinyHTTPServer:
    """A loopback HTTP server answering every request with `self.response` (bytes), then closing."""

    def __init__(self, response):
        self.response = response
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopped.is_set():
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            try:
                c.settimeout(2)
                data = b""
                while b"\r\n\r\n" not in data and len(data) < 65536:
                    b = c.recv(4096)
                    if not b:
                        break
                    data += b
                c.sendall(self.reply(data))
            except OSError:
                pass
            finally:
                c.close()

    def reply(self, _head):
        """The answer to a request whose head is `_head` (bytes)."""
        return self.response

    def close(self):
        """Stops listening: the port then refuses connections."""
        self.stopped.set()
        self.thread.join(1)
        self.sock.close()


def open_many(port, count, payload, sources, connect_limit=8.0):
    """`count` non-blocking connections to 127.0.0.1:port, spread over the `sources` addresses,
    each sending `payload` once connected. Returns the sockets that connected and sent."""
    sel = selectors.DefaultSelector()
    done = []
    try:
        for i in range(count):
            s = socket.socket()
            s.setblocking(False)
            s.bind((sources[i % len(sources)], 0))
            if s.connect_ex(("127.0.0.1", port)) not in (0, errno.EINPROGRESS):
                s.close()
                continue
            sel.register(s, selectors.EVENT_WRITE)
        end = time.monotonic() + connect_limit
        while sel.get_map() and time.monotonic() < end:
            for key, _ in sel.select(timeout=0.2):
                s = key.fileobj
                sel.unregister(s)
                try:
                    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                        if payload:
                            s.send(payload)
                        done.append(s)
                        continue
                except OSError:
                    pass
                s.close()
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        return done
    finally:
        sel.close()


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


class RecordingHTTPServer(TinyHTTPServer):
    """A loopback HTTP server that answers `answer(path)` (bytes) and records every request's
    path and headers (lower-case names) in `self.seen`, as (path, headers dict)."""

    def __init__(self, answer):
        self.answer = answer
        self.seen = []
        super().__init__(b"")

    def reply(self, data):
        lines = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        path = parts[1] if len(parts) > 1 else ""
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        self.seen.append((path, headers))
        return self.answer(path)
