"""The hop lab's web target: `python3 -m rxlab.hoplab.http204 PORT` answers every GET and HEAD
with 204 No Content on [::]:PORT (IPv4 and IPv6 alike) until it is stopped. It prints `ready`
once it listens. No name lookups (it runs in a namespace without a resolver)."""

import socket
import socketserver
import sys
from http.server import BaseHTTPRequestHandler


class NoContent(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.send_response(204)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    do_HEAD = do_GET

    def log_message(self, *_):
        pass


class DualStack(socketserver.ThreadingMixIn, socketserver.TCPServer):
    address_family = socket.AF_INET6
    allow_reuse_address = True
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


def main():
    server = DualStack(("::", int(sys.argv[1])), NoContent)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
