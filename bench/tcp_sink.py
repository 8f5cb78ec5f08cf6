#!/usr/bin/env python3
"""A TCP sink for bench/load.sh and bench/soak.sh: listens on 0.0.0.0:PORT (inside the bench's
own network namespace, so every 127.x.y.z address reaches it), accepts and closes at once.
Prints "ready" when listening. Runs until killed."""

import selectors
import socket
import sys

port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(4096)
s.setblocking(False)
print("ready", flush=True)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ)
while True:
    sel.select()
    while True:
        try:
            c, _ = s.accept()
        except BlockingIOError:
            break
        c.close()
