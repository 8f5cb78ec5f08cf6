"""Which series names a PromQL expression selects, as the real Prometheus parses it.

A Prometheus started for this (proof.sh: an empty TSDB, no scrapes, one
`remote_read` endpoint with `read_recent: true`) sends every vector and matrix selector of every
query it evaluates to the remote-read endpoint served here, as label matchers. So evaluating an
expression through its HTTP API and collecting those requests gives exactly the selectors
Prometheus' own parser found: no PromQL tokenizer of ours. The cost is a reader of the remote-read
wire format: snappy-compressed protobuf (prompb.ReadRequest); snappy comes from cramjam (PyPI),
the few protobuf fields needed are read below; the reply is an empty result per query.

  python3 -m rxlab.promproof.remote_read --port-file FILE   serves until stopped (by its PID)
  Selectors(url).take()                                 the selectors received since the last take
"""

import argparse
import http.server
import json
import sys
import threading
import urllib.request

import cramjam  # snappy, from PyPI (proof.sh installs it)

MATCH_TYPES = ("=", "!=", "=~", "!~")  # prompb.LabelMatcher.Type, in enum order


def snappy_decode(data):
    """The snappy block format Prometheus sends (cramjam: the library, not our own codec)."""
    return bytes(cramjam.snappy.decompress_raw(data))


def snappy_encode(data):
    return bytes(cramjam.snappy.compress_raw(data))


def protobuf_fields(data):
    """(field number, value) of one protobuf message: varints as int, length-delimited as bytes."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 2:
            n, i = varint(data, i)
            value, i = data[i : i + n], i + n
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, i = data[i : i + width], i + width
        else:
            raise ValueError(f"protobuf: wire type {wire}")
        yield number, value


def varint(data, i):
    value, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def read_request_selectors(body):
    """prompb.ReadRequest -> one list of (label, op, value) matchers per query (field 1), each
    from the query's LabelMatchers (field 3: type 1, name 2, value 3; type EQ is the default)."""
    selectors = []
    for number, query in protobuf_fields(snappy_decode(body)):
        if number != 1:
            continue
        matchers = []
        for qn, m in protobuf_fields(query):
            if qn == 3:
                f = dict(protobuf_fields(m))
                matchers.append((f.get(2, b"").decode(), MATCH_TYPES[f.get(1, 0)], f.get(3, b"").decode()))
        selectors.append(sorted(matchers))
    return selectors


class Handler(http.server.BaseHTTPRequestHandler):
    received, lock = [], threading.Lock()

    def do_POST(self):  # /read: Prometheus' remote read
        selectors = read_request_selectors(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            self.received.extend(selectors)
        # prompb.ReadResponse: one empty QueryResult (field 1, length 0) per query.
        self.reply(200, snappy_encode(b"\x0a\x00" * len(selectors)), "application/x-protobuf", snappy=True)

    def do_GET(self):  # /take: what arrived since the last take
        with self.lock:
            taken, self.received[:] = list(self.received), []
        self.reply(200, json.dumps(taken).encode(), "application/json")

    def reply(self, code, body, kind, snappy=False):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        if snappy:
            self.send_header("Content-Encoding", "snappy")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Selectors:
    """The client side: the selectors the stub at `url` received since the last take()."""

    def __init__(self, url):
        self.url = url.rstrip("/")

    def take(self):
        with urllib.request.urlopen(f"{self.url}/take", timeout=10) as r:
            return [[tuple(m) for m in s] for s in json.load(r)]


def names(selectors):
    """The series names the selectors ask for (__name__="…"), and the selectors that name none."""
    named, other = set(), []
    for s in selectors:
        n = [v for label, op, v in s if label == "__name__" and op == "="]
        named.update(n)
        if not n:
            other.append(s)
    return named, other


def main():
    ap = argparse.ArgumentParser(description="the remote-read endpoint that records selectors")
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
