"""The blackbox side-by-side lab's TCP banner server (run in the target namespace by net.py):

  python3 -m rxlab.blackboxlab.banner ADDRESS...

On each ADDRESS (IPv4 or IPv6): port 22 sends an SSH banner (`SSH-2.0-OpenSSH_9.2\\r\\n`) and
reads until the client closes (at most 10 s); port 2222 sends a wrong banner (an SMTP greeting)
and closes; port 2223 accepts and says nothing for 10 s. Prints `ready` once every socket
listens; runs until it is stopped (by PID)."""

import socket
import sys
import threading
import time

BANNERS = {22: b"SSH-2.0-OpenSSH_9.2\r\n", 2222: b"220 mail.lab.test ESMTP ready\r\n", 2223: None}
HOLD = 10.0


def serve(conn, port):
    try:
        conn.settimeout(HOLD)
        banner = BANNERS[port]
        if banner is None:
            time.sleep(HOLD)
            return
        conn.sendall(banner)
        if port == 2222:
            return
        deadline = time.time() + HOLD
        while time.time() < deadline and conn.recv(4096):
            pass
    except OSError:
        pass
    finally:
        conn.close()


def accept(sock, port):
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            continue
        threading.Thread(target=serve, args=(conn, port), daemon=True).start()


def main(addresses):
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        for port in BANNERS:
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address, port))
            sock.listen(64)
            threading.Thread(target=accept, args=(sock, port), daemon=True).start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1:])
