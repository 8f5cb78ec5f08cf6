"""The truth lab's servers, one module run in a namespace (`python3 -m rxlab.truthlab.servers
KIND ...`), each printing `ready` once it listens (a client prints `connected`):

- `web CERT KEY`: the lab internet's captive check, `204` for every GET/HEAD on [::]:80 and,
  over TLS with CERT/KEY, on [::]:443 (IPv4 and IPv6 alike);
- `portal PORT`: a captive portal, `302` to http://portal.example/login for every GET/HEAD
  on 0.0.0.0:PORT (the router DNATs the LAN's IPv4 port 80 to it);
- `stream PORT [ADDR]`: answers each byte a client sends with 16 KiB, for ever;
- `client HOST PORT`: connects to a stream server and asks for a chunk every 100 ms (both
  directions carry data, so a dropped flow retransmits, as a real application's does).
No name lookups: the namespaces have no resolver of their own."""

import socketserver
import ssl
import sys
import threading

from ..hoplab.http204 import DualStack, NoContent
from ..uplinklab.stream import client, serve


class Portal(NoContent):
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", "http://portal.example/login")
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    do_HEAD = do_GET


class TLSDualStack(DualStack):
    context = None

    def get_request(self):
        conn, addr = self.socket.accept()
        conn.settimeout(5)
        return self.context.wrap_socket(conn, server_side=True, do_handshake_on_connect=False), addr

    def finish_request(self, request, client_address):
        try:
            request.do_handshake()
        except (OSError, ssl.SSLError):
            return
        super().finish_request(request, client_address)


def web(cert, key):
    plain = DualStack(("::", 80), NoContent)
    TLSDualStack.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    TLSDualStack.context.load_cert_chain(cert, key)
    tls = TLSDualStack(("::", 443), NoContent)
    threading.Thread(target=tls.serve_forever, daemon=True).start()
    print("ready", flush=True)
    plain.serve_forever()


def portal(port):
    class V4(socketserver.ThreadingMixIn, socketserver.TCPServer):
        allow_reuse_address = True
        daemon_threads = True

    server = V4(("0.0.0.0", port), Portal)
    print("ready", flush=True)
    server.serve_forever()


def stream(port, address="::"):
    serve(port, address)


if __name__ == "__main__":
    kind, rest = sys.argv[1], sys.argv[2:]
    if kind == "web":
        web(*rest)
    elif kind == "portal":
        portal(int(rest[0]))
    elif kind == "stream":
        stream(int(rest[0]), *rest[1:])
    else:
        client(rest[0], int(rest[1]))
