"""The router's RFC 8908 API as nginx serves it (one nginx per bench, in the router namespace, in
the foreground, every path under the bench's work directory), and the answers it gives.

    https://192.168.42.1/captive, https://[2001:db8:42::1]/captive   the bench's own API: the
        file WORK/api/captive.json, rewritten to flip captive/logged in (no-store)
    https://192.168.42.1/h/NAME                the hostile answers (HOSTILE below), shared by
        every bench (the 10 MB one is written once)
    http://192.168.42.1/h/...                  the same over plain HTTP (an http:// API)
    https://192.168.42.1:8443/...              a certificate for another name (other.example)
    https://192.168.42.1:8444/...              a certificate from a CA the exporter does not trust
    http://*:8080/                             the portal the router intercepts port 80 to: 302
    https://192.168.42.1:8445/                 the slow API (servers.py drip, not nginx)

The access log records port, path, status, bytes and the Accept header of every request, so a
row can tell which URLs the exporter fetched (and which it rightly never did)."""

import json
import os

LAN4, LAN6 = "192.168.42.1", "2001:db8:42::1"
API4 = f"https://{LAN4}/captive"
API6 = f"https://[{LAN6}]/captive"
USER_PORTAL = f"https://{LAN4}/login"
VENUE = f"https://{LAN4}/venue"
PORTAL_PORT, OTHER_NAME_PORT, ROGUE_PORT, SLOW_PORT = 8080, 8443, 8444, 8445
CAPTIVE_TYPE = "application/captive+json"
MARK = "rxhostile"  # every string a hostile answer carries has it: it must never reach a label

CAPTIVE = {"captive": True, "user-portal-url": USER_PORTAL, "venue-info-url": VENUE}
LOGGED_IN = {
    "captive": False,
    "user-portal-url": USER_PORTAL,
    "venue-info-url": VENUE,
    "seconds-remaining": 300,
    "bytes-remaining": 1000000,
    "can-extend-session": True,
}


def hostile_json(**fields):
    return json.dumps({"captive": True, "user-portal-url": f"https://{LAN4}/{MARK}", **fields})


# name -> (file under /h/, body). Each says captive:true in some way a careless reader would
# believe: believing it makes the verdict portal, which the hostile rows refuse.
HOSTILE_FILES = {
    "big.json": None,  # 10 MB, written by write_shared
    "true.json": hostile_json(),
    "wrongtype.html": hostile_json(),
    "invalid.json": hostile_json()[:-1],  # the closing brace is missing
    "missing.json": json.dumps({"user-portal-url": f"https://{LAN4}/{MARK}-missing"}),
    "repeated.json": f'{{"captive": false, "user-portal-url": "https://{LAN4}/{MARK}-repeated", "captive": true}}',
    "bel.json": hostile_json(**{"user-portal-url": f"https://{LAN4}/login\u0007{MARK}"}),
    "script.json": hostile_json(**{"user-portal-url": f"https://{LAN4}/login\n<script>{MARK}</script>"}),
    "markup.json": hostile_json(**{"user-portal-url": f'https://{LAN4}/login"><script>{MARK}</script>'}),
    "url100k.json": hostile_json(**{"user-portal-url": f"https://{LAN4}/{MARK}" + "a" * 100_000}),
    "url3k.json": hostile_json(**{"user-portal-url": f"https://{LAN4}/{MARK}" + "a" * 3000}),
    "httpportal.json": hostile_json(**{"user-portal-url": f"http://{LAN4}/{MARK}-plain"}),
    "redirected.json": hostile_json(),
}


def write_shared(d):
    """The hostile answers, once for all benches, in `d`."""
    os.makedirs(d, exist_ok=True)
    for name, body in HOSTILE_FILES.items():
        with open(os.path.join(d, name), "w") as f:
            if body is None:
                head = f'{{"captive": true, "user-portal-url": "https://{LAN4}/{MARK}-big", "pad": "'
                f.write(head + "a" * (10_000_000 - len(head) - 2) + '"}')
            else:
                f.write(body)
    return d


def write_answer(work, answer):
    """Replaces the bench's API answer (a rename: nginx never serves half a file)."""
    d = os.path.join(work, "api")
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, ".captive.json.tmp")
    with open(tmp, "w") as f:
        json.dump(answer, f)
    os.replace(tmp, os.path.join(d, "captive.json"))


def nginx_conf(work, shared, server, other_name, rogue):
    """nginx.conf for a bench. `server`, `other_name`, `rogue`: (cert, key) pairs."""
    tmp = os.path.join(work, "nginx-tmp")
    os.makedirs(tmp, exist_ok=True)
    temps = "".join(
        f"  {kind}_temp_path {os.path.join(tmp, kind)};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    api_root = os.path.join(work, "api")

    def tls(port, pair, addresses=(f"{LAN4}",)):
        listens = "".join(f"    listen {a}:{port} ssl;\n" for a in addresses)
        return f"{listens}    ssl_certificate {pair[0]};\n    ssl_certificate_key {pair[1]};\n"

    hostile = (
        f"    location /h/ {{\n      alias {shared}/;\n    }}\n"
        f"    location = /h/redirect {{\n      return 302 https://{LAN4}/h/redirected.json;\n    }}\n"
    )
    return f"""daemon off;
user root;
worker_processes 1;
pid {os.path.join(work, "nginx.pid")};
error_log stderr notice;
events {{
  worker_connections 256;
}}
http {{
  log_format rx '$msec $server_port $request_uri $status $body_bytes_sent accept="$http_accept"';
  access_log {os.path.join(work, "nginx-access.log")} rx;
{temps}  types {{
    application/captive+json json;
    text/html html;
  }}
  default_type application/octet-stream;
  server {{
{tls(443, server, (LAN4, f"[{LAN6}]"))}    location = /captive {{
      root {api_root};
      add_header Cache-Control no-store always;
      try_files /captive.json =404;
    }}
    location = /login {{
      default_type text/html;
      return 200 "<p>the lab's login page</p>";
    }}
{hostile}  }}
  server {{
    listen {LAN4}:80;
{hostile}  }}
  server {{
{tls(OTHER_NAME_PORT, other_name)}{hostile}  }}
  server {{
{tls(ROGUE_PORT, rogue)}{hostile}  }}
  server {{
    listen {PORTAL_PORT};
    listen [::]:{PORTAL_PORT};
    return 302 https://{LAN4}/login;
  }}
}}
"""


def access_mark(work):
    """The size of the bench's access log now: a mark for `fetched`."""
    try:
        return os.path.getsize(os.path.join(work, "nginx-access.log"))
    except OSError:
        return 0


def fetched(work, mark=0):
    """[(port, path, status, accept)] of the requests nginx served since byte `mark` of its access
    log."""
    out = []
    try:
        with open(os.path.join(work, "nginx-access.log"), errors="replace") as f:
            f.seek(mark)
            for line in f:
                parts = line.split()
                if len(parts) >= 4:
                    out.append((parts[1], parts[2], parts[3], line.split("accept=", 1)[-1].strip().strip('"')))
    except OSError:
        pass
    return out
