"""The uplink lab's long-lived transfer: `python3 -m rxlab.uplinklab.stream server PORT` answers each
byte a client sends with 16 KiB until it is stopped (prints `ready` once it listens);
`python3 -m rxlab.uplinklab.stream client HOST PORT DEVICE MARK` connects bound to DEVICE
(SO_BINDTODEVICE) with firewall mark MARK (SO_MARK, so the uplink's `ip rule` table carries it)
and asks for a chunk every 100 ms, for ever (prints `connected`). Both directions carry data: when
the path dies the client's unanswered requests are retransmitted, as a real application's are."""

import socket
import sys
import threading
import time

CHUNK = 16 * 1024
SO_MARK = 36
SO_BINDTODEVICE = 25


def serve(port, address="0.0.0.0"):
    """Answers each byte a client sends with CHUNK bytes, for ever; `::` listens on both families."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6 and address == "::":
        listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.bind((address, port))
    listener.listen(8)
    print("ready", flush=True)
    payload = b"z" * CHUNK

    def one(conn):
        with conn:
            while conn.recv(1):
                conn.sendall(payload)

    while True:
        conn, _ = listener.accept()
        threading.Thread(target=one, args=(conn,), daemon=True).start()


def client(host, port, device=None, mark=None):
    """Connects (bound to `device`, with firewall `mark`, when given) and asks for a chunk every
    100 ms until the server closes."""
    if device is None and mark is None:
        s = socket.create_connection((host, port), timeout=5)
        s.settimeout(None)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, device.encode())
        s.setsockopt(socket.SOL_SOCKET, SO_MARK, mark)
        s.connect((host, port))
    print("connected", flush=True)
    while True:
        s.sendall(b"x")
        got = 0
        while got < CHUNK:
            data = s.recv(CHUNK - got)
            if not data:
                return
            got += len(data)
        time.sleep(0.1)


if __name__ == "__main__":
    if sys.argv[1] == "server":
        serve(int(sys.argv[2]))
    else:
        client(sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5], 0))
