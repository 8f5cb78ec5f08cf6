"""The blackbox side-by-side lab's network and servers, in namespaces made for the run:

    client (both exporters, Prometheus) ── router (forwarding) ── target (nginx, unbound ×2,
    198.18.1.2 / 2001:db8:1::2                                      banner server; nftables)

The target holds one address per role (WEB, WRONG, EXPIRED, H2, SSH, DNS, REFUSING, NOICMP,
DROP; each in 198.18.2.0/24 and 2001:db8:2::/64), and nftables drops everything to DROP and the
echo requests to NOICMP. The client resolves the lab's names from its own hosts file
(/etc/netns/CLIENT/hosts) and asks the lab's unbound for any other name (resolv.conf): no
process of the lab ever resolves a public name or sends a packet out of these namespaces.

Servers (all in the foreground, stopped by PID):
- nginx: www.lab.test over HTTP (:80) and HTTPS (:443, the lab CA's leaf for the name and both
  addresses) with pages, redirects, a 500, wrong bodies, header and auth pages; the
  vhost.example.com and login.example.com virtual hosts that blackbox's `http_2xx_example` and
  `http_basic_auth_example` ask for; a wrong-name
  certificate (WRONG), an expired one (EXPIRED), HTTP/2 (H2), chain.lab.test (a leaf and an
  intermediate CA that expires before it), a forward proxy on WEB:3128;
- unbound on DNS (UDP and TCP 53 on both families, DNS over TLS on 853): the static zone
  lab.test (SOA, NS, A, AAAA; every other name NXDOMAIN, and every name outside the zone
  refused); a second unbound on REFUSING that refuses every client;
- banner.py on SSH: an SSH banner on :22, a wrong banner on :2222 (then closes), silence on
  :2223, SMTP and IMAP with STARTTLS (:25, :143), IRC (:6667) and AMQP's greeting over TLS
  (:5671), the TLS ones with the lab CA's leaf for ssh.lab.test and both SSH addresses."""

import base64
import os
import subprocess
import sys

from .. import certs
from ..faultlab.daemons import UNBOUND_SERVER
from ..netns import Namespaces, NsWorker, ResolvConf, addresses, nft, sysctl
from ..procs import stop_all
from ..util import connects, run, tail, wait_until

V4, V6 = "198.18.2.", "2001:db8:2::"
CLIENT4, CLIENT6 = "198.18.1.2", "2001:db8:1::2"
ROUTER_LAN4, ROUTER_LAN6 = "198.18.1.1", "2001:db8:1::1"
ROUTER_WAN4, ROUTER_WAN6 = "198.18.2.1", "2001:db8:2::1"
TARGET4, TARGET6 = "198.18.2.2", "2001:db8:2::2"

# The target's service addresses: role -> last part of both addresses.
ROLES = {
    "WEB": "10",
    "WRONG": "11",
    "EXPIRED": "12",
    "H2": "13",
    "SSH": "22",
    "DNS": "53",
    "REFUSING": "54",
    "NOICMP": "98",
    "DROP": "99",
}
A4 = {role: V4 + n for role, n in ROLES.items()}
A6 = {role: V6 + n for role, n in ROLES.items()}

ZONE = "lab.test"
SOA_SERIAL = 2024010101
# What the client's hosts file says (names outside it go to the lab's unbound).
HOSTS = [
    ("www.lab.test", A4["WEB"], A6["WEB"]),
    ("v4only.lab.test", A4["WEB"], None),
    ("v6only.lab.test", None, A6["WEB"]),
    ("wrong.lab.test", A4["WRONG"], A6["WRONG"]),
    ("expired.lab.test", A4["EXPIRED"], None),
    ("h2.lab.test", A4["H2"], None),
    ("chain.lab.test", A4["WEB"], None),
    ("ssh.lab.test", A4["SSH"], A6["SSH"]),
    ("ns.lab.test", A4["DNS"], None),
    ("blackhole.lab.test", A4["DROP"], A6["DROP"]),
]

# Ports in the client namespace (its own loopback).
BLACKBOX_PORT, OURS_PORT, PROMETHEUS_PORT = 9115, 10361, 9090
PROXY_PORT = 3128
BASIC_USER, BASIC_PASSWORD, BEARER = "lab", "secret", "lab-token"

NFT_RULES = f"""table inet rxbb {{
  chain input {{
    type filter hook input priority 0; policy accept;
    ip daddr {A4["DROP"]} drop
    ip6 daddr {A6["DROP"]} drop
    ip daddr {A4["NOICMP"]} icmp type echo-request drop
    ip6 daddr {A6["NOICMP"]} icmpv6 type echo-request drop
  }}
}}
"""

PAGE = "<html><body><p>lab-page-marker: Download the latest version here</p></body></html>\n"
# The www.lab.test pages, the same over HTTP, HTTPS and HTTP/2.
LOCATIONS = f"""absolute_redirect off;
location = / {{ return 200 "{PAGE}"; }}
location = /page {{ return 200 "{PAGE}"; }}
location = /small {{ return 200 "ok\\n"; }}
location = /redirect {{ return 302 /; }}
location = /redirect2 {{ return 301 /redirect; }}
location = /loop {{ return 302 /loop; }}
location = /to-https {{ return 301 https://www.lab.test/; }}
location = /status500 {{ return 500 "broken\\n"; }}
location = /wrongbody {{ return 200 "<html><body>nothing to see</body></html>\\n"; }}
location = /dberror {{ return 200 "Could not connect to database. lab-page-marker\\n"; }}
location = /plain {{ default_type text/plain; return 200 "plain\\n"; }}
location = /xlab-good {{ add_header X-Lab good; return 200 "{PAGE}"; }}
location = /xlab-bad {{ add_header X-Lab bad; return 200 "{PAGE}"; }}
location = /auth {{
  if ($http_authorization != "Basic {{basic}}") {{ return 401 "who are you?\\n"; }}
  return 200 "welcome\\n";
}}
location = /bearer {{
  if ($http_authorization != "Bearer {BEARER}") {{ return 401 "who are you?\\n"; }}
  return 200 "welcome\\n";
}}
location = /post {{ return 200 "posted\\n"; }}
location = /file.html {{ alias {{work}}/file.html; }}
location = /big.html {{ alias {{work}}/big.html; }}
location / {{ return 404 "no such page\\n"; }}
"""

# blackbox's http_2xx_example asks for Host vhost.example.com: a virtual host of the lab's nginx
# (the name is a header only, never resolved).
VHOST = """absolute_redirect off;
location = / { add_header Access-Control-Allow-Origin "*"; return 200 "Download the latest version here\\n"; }
location = /dberror { add_header Access-Control-Allow-Origin "*";
  return 200 "Could not connect to database. Download the latest version here\\n"; }
location = /nodownload { add_header Access-Control-Allow-Origin "*"; return 200 "nothing here\\n"; }
location = /cookie { add_header Access-Control-Allow-Origin "*"; add_header Set-Cookie "s=1";
  return 200 "Download the latest version here\\n"; }
location = /nocors { return 200 "Download the latest version here\\n"; }
location / { return 404 "no such page\\n"; }
"""

NGINX_CONF = """# The blackbox side-by-side lab's nginx (scripts/rxlab/blackboxlab/net.py): foreground.
daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log notice;
events {{ worker_connections 512; }}
http {{
  access_log {work}/nginx-access.log;
  client_body_temp_path {work}/nginx-body;
  proxy_temp_path {work}/nginx-proxy;
  fastcgi_temp_path {work}/nginx-fastcgi;
  uwsgi_temp_path {work}/nginx-uwsgi;
  scgi_temp_path {work}/nginx-scgi;
  default_type text/html;
  server_tokens off;
  ssl_protocols TLSv1.2 TLSv1.3;
  server {{
    listen {web4}:80 default_server;
    listen [{web6}]:80 default_server;
    listen {web4}:443 ssl default_server;
    listen [{web6}]:443 ssl default_server;
    server_name www.lab.test;
    ssl_certificate {work}/www.pem;
    ssl_certificate_key {work}/www.key;
    include {work}/locations.conf;
  }}
  server {{
    listen {web4}:443 ssl;
    server_name chain.lab.test;
    ssl_certificate {work}/chain-full.pem;
    ssl_certificate_key {work}/chain.key;
    include {work}/locations.conf;
  }}
  server {{
    listen {web4}:80;
    listen [{web6}]:80;
    server_name vhost.example.com;
    include {work}/vhost.conf;
  }}
  # blackbox's http_basic_auth_example: POST with Host login.example.com and its credentials.
  server {{
    listen {web4}:80;
    server_name login.example.com;
    location = / {{
      if ($http_authorization != "Basic {example_basic}") {{ return 401 "who are you?\n"; }}
      return 200 "logged in\n";
    }}
    location = /denied {{ return 403 "denied\n"; }}
    location / {{ return 404 "no such page\n"; }}
  }}
  server {{
    listen {wrong4}:443 ssl;
    listen [{wrong6}]:443 ssl;
    ssl_certificate {work}/other.pem;
    ssl_certificate_key {work}/other.key;
    include {work}/locations.conf;
  }}
  server {{
    listen {expired4}:443 ssl;
    ssl_certificate {work}/expired.pem;
    ssl_certificate_key {work}/expired.key;
    include {work}/locations.conf;
  }}
  server {{
    listen {h2_4}:443 ssl http2;
    ssl_certificate {work}/h2.pem;
    ssl_certificate_key {work}/h2.key;
    include {work}/locations.conf;
  }}
  # A forward proxy for plain HTTP (absolute-form requests to the lab's addresses).
  server {{
    listen {web4}:{proxy};
    location / {{ proxy_pass http://$host$request_uri; }}
  }}
}}
"""

UNBOUND_ZONE = f"""  local-zone: "." refuse
  local-zone: "{ZONE}." static
  local-data: "{ZONE}. 3600 IN SOA ns.{ZONE}. hostmaster.{ZONE}. {SOA_SERIAL} 3600 600 86400 60"
  local-data: "{ZONE}. 3600 IN NS ns.{ZONE}."
  local-data: "ns.{ZONE}. 300 IN A {A4["DNS"]}"
  local-data: "www.{ZONE}. 300 IN A {A4["WEB"]}"
  local-data: "www.{ZONE}. 300 IN AAAA {A6["WEB"]}"
"""

UNBOUND_GOOD = (
    UNBOUND_SERVER
    + f"""  verbosity: 1
  do-ip4: yes
  do-ip6: yes
  interface: {A4["DNS"]}
  interface: {A6["DNS"]}
  interface: {A4["DNS"]}@853
  tls-port: 853
  tls-service-key: "{{work}}/dns.key"
  tls-service-pem: "{{work}}/dns.pem"
  access-control: 0.0.0.0/0 allow
  access-control: ::/0 allow
  module-config: "iterator"
"""
    + UNBOUND_ZONE
    + "remote-control:\n  control-enable: no\n"
)

UNBOUND_REFUSING = (
    UNBOUND_SERVER
    + f"""  verbosity: 1
  do-ip6: no
  interface: {A4["REFUSING"]}
  access-control: 0.0.0.0/0 refuse
  module-config: "iterator"
"""
    + UNBOUND_ZONE
    + "remote-control:\n  control-enable: no\n"
)

OPENSSL_CA = """[ ca ]
default_ca = lab
[ lab ]
database = {work}/ca-index.txt
new_certs_dir = {work}
certificate = {work}/ca.pem
private_key = {work}/ca.key
serial = {work}/ca-serial
default_md = sha256
policy = anything
copy_extensions = copy
unique_subject = no
[ anything ]
commonName = supplied
"""


class Lab:
    """The namespaces, files and processes of one run; `close()` undoes them all."""

    def __init__(self, prefix, work):
        self.prefix, self.work = prefix, work
        self.client, self.router, self.target = (f"{prefix}-{n}" for n in ("client", "router", "target"))
        self.spaces = Namespaces(Namespaces.QUIET_IPV6)
        self.etc = ResolvConf()
        self.processes = []
        self.ca = os.path.join(work, "ca.pem")
        self.probe_worker = None  # a thread in the target namespace: are the servers listening?

    # ---- network ---------------------------------------------------------------------------
    def build(self):
        for ns in (self.client, self.router, self.target):
            self.spaces.add(ns)
        s = self.spaces
        s.veth(self.client, "c0", self.router, "r0")
        s.veth(self.router, "r1", self.target, "t0")
        addresses(self.client, "c0", f"{CLIENT4}/24", f"{CLIENT6}/64")
        addresses(self.router, "r0", f"{ROUTER_LAN4}/24", f"{ROUTER_LAN6}/64")
        addresses(self.router, "r1", f"{ROUTER_WAN4}/24", f"{ROUTER_WAN6}/64")
        addresses(
            self.target,
            "t0",
            f"{TARGET4}/24",
            f"{TARGET6}/64",
            *(f"{a}/24" for a in A4.values()),
            *(f"{a}/64" for a in A6.values()),
        )
        sysctl(self.router, "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        for ns in (self.router, self.target):
            sysctl(ns, "net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0")
        for ns, gw4, gw6 in ((self.client, ROUTER_LAN4, ROUTER_LAN6), (self.target, ROUTER_WAN4, ROUTER_WAN6)):
            run("ip", "-n", ns, "route", "add", "default", "via", gw4)
            run("ip", "-n", ns, "-6", "route", "add", "default", "via", gw6)
        nft(self.target, NFT_RULES)
        self.probe_worker = NsWorker(self.target)
        # The client's resolver: its own hosts file, and the lab's unbound for anything else.
        resolv = self.etc.write(self.client, f"nameserver {A4['DNS']}\n")
        with open(os.path.join(os.path.dirname(resolv), "hosts"), "w") as f:
            f.write("127.0.0.1 localhost\n::1 localhost\n")
            for name, a4, a6 in HOSTS:
                for a in (a4, a6):
                    if a:
                        f.write(f"{a} {name}\n")

    # ---- certificates ----------------------------------------------------------------------
    def certificates(self):
        """The lab CA; leaves for www (its name and both addresses), other.lab.test (served
        for wrong.lab.test), h2 and the DNS-over-TLS server; an expired leaf (2020) made with
        `openssl ca`, which can date a certificate in the past."""
        w = self.work
        certs.make_ca(w, "rxbb lab CA")
        leaves = [
            ("www", "www.lab.test", f"DNS:www.lab.test,IP:{A4['WEB']},IP:{A6['WEB']}"),
            ("other", "other.lab.test", "DNS:other.lab.test"),
            ("h2", "h2.lab.test", "DNS:h2.lab.test"),
            ("dns", "ns.lab.test", f"DNS:ns.lab.test,IP:{A4['DNS']}"),
            ("svc", "ssh.lab.test", f"DNS:ssh.lab.test,IP:{A4['SSH']},IP:{A6['SSH']}"),
        ]
        for name, cn, san in leaves:
            _, key = certs.make_leaf(w, name, cn, san)
            os.chmod(key, 0o644)
        cnf = os.path.join(w, "ca.cnf")
        with open(cnf, "w") as f:
            f.write(OPENSSL_CA.format(work=w))
        open(os.path.join(w, "ca-index.txt"), "w").close()
        with open(os.path.join(w, "ca-serial"), "w") as f:
            f.write("1000\n")
        key, csr = os.path.join(w, "expired.key"), os.path.join(w, "expired.csr")
        certs.openssl("req", "-new", *certs.EC_KEY, "-keyout", key, "-out", csr, "-subj", "/CN=expired.lab.test",
                      "-addext", "subjectAltName=DNS:expired.lab.test")  # fmt: skip
        certs.openssl("ca", "-batch", "-config", cnf, "-in", csr, "-out", os.path.join(w, "expired.pem"), "-notext",
                      "-startdate", "20200101000000Z", "-enddate", "20200201000000Z")  # fmt: skip
        os.chmod(key, 0o644)
        # An intermediate CA valid for one day, and a leaf it signs valid for two: the chain that
        # chain.lab.test serves (leaf, then intermediate) expires with its intermediate first.
        key, csr = os.path.join(w, "inter.key"), os.path.join(w, "inter.csr")
        certs.openssl("req", "-new", *certs.EC_KEY, "-keyout", key, "-out", csr, "-subj", "/CN=rxbb intermediate",
                      "-addext", "basicConstraints=critical,CA:TRUE",
                      "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
        certs.openssl("ca", "-batch", "-config", cnf, "-in", csr, "-out", os.path.join(w, "inter.pem"), "-notext",
                      "-days", "1")  # fmt: skip
        _, key = certs.make_leaf(w, "chain", "chain.lab.test", "DNS:chain.lab.test", ca="inter")
        os.chmod(key, 0o644)
        with open(os.path.join(w, "chain-full.pem"), "w") as out:
            for name in ("chain.pem", "inter.pem"):
                with open(os.path.join(w, name)) as f:
                    out.write(f.read())

    # ---- servers ---------------------------------------------------------------------------
    def daemon(self, ns, argv, log_name):
        log = open(os.path.join(self.work, log_name), "w")
        p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(p)
        return p

    def wait_ports(self, what, proc, log_name, ports, timeout=15):
        def up():
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited {proc.returncode}")
            return all(self.probe_worker.call(lambda a=a, p=p: connects(a, p, timeout=0.5)) for a, p in ports)

        try:
            ok = wait_until(up, timeout, step=0.1)
        except RuntimeError:
            ok = None
        if not ok:
            raise RuntimeError(f"{what} did not come up on {ports}:\n{tail(os.path.join(self.work, log_name))}")

    def start_servers(self):
        w = self.work
        os.chmod(w, 0o755)  # nginx's workers read the static pages
        with open(os.path.join(w, "file.html"), "w") as f:
            f.write(PAGE)
        with open(os.path.join(w, "big.html"), "w") as f:
            f.write(PAGE + ("<!-- padding -->\n" * 400))
        for name in ("file.html", "big.html"):
            os.chmod(os.path.join(w, name), 0o644)
        basic = base64.b64encode(f"{BASIC_USER}:{BASIC_PASSWORD}".encode()).decode()
        with open(os.path.join(w, "locations.conf"), "w") as f:
            f.write(LOCATIONS.replace("{basic}", basic).replace("{work}", w))
        with open(os.path.join(w, "vhost.conf"), "w") as f:
            f.write(VHOST)
        conf = os.path.join(w, "nginx.conf")
        with open(conf, "w") as f:
            f.write(
                NGINX_CONF.format(
                    work=w,
                    web4=A4["WEB"],
                    web6=A6["WEB"],
                    wrong4=A4["WRONG"],
                    wrong6=A6["WRONG"],
                    expired4=A4["EXPIRED"],
                    h2_4=A4["H2"],
                    proxy=PROXY_PORT,
                    example_basic=base64.b64encode(b"username:mysecret").decode(),
                )
            )
        base = ["nginx", "-p", w + "/", "-e", os.path.join(w, "nginx-error.log"), "-c", conf]
        test = run("ip", "netns", "exec", self.target, *base, "-t", check=False)
        if test.returncode != 0:
            raise RuntimeError(f"nginx -t: {test.stderr}")
        nginx = self.daemon(self.target, base, "nginx.out")
        for name, text in (("unbound.conf", UNBOUND_GOOD), ("unbound-refusing.conf", UNBOUND_REFUSING)):
            with open(os.path.join(w, name), "w") as f:
                f.write(text.replace("{work}", w))
            run("unbound-checkconf", os.path.join(w, name))
        good = self.daemon(self.target, ["unbound", "-d", "-c", os.path.join(w, "unbound.conf")], "unbound.log")
        refusing = self.daemon(
            self.target, ["unbound", "-d", "-c", os.path.join(w, "unbound-refusing.conf")], "unbound-refusing.log"
        )
        scripts = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        banner = subprocess.Popen(
            ["ip", "netns", "exec", self.target, sys.executable, "-m", "rxlab.blackboxlab.banner",
             os.path.join(w, "svc.pem"), os.path.join(w, "svc.key"), A4["SSH"], A6["SSH"]],
            stdout=subprocess.PIPE,
            stderr=open(os.path.join(w, "banner.log"), "w"),
            text=True,
            env=dict(os.environ, PYTHONPATH=scripts, PYTHONDONTWRITEBYTECODE="1"),
        )  # fmt: skip
        self.processes.append(banner)
        if not banner.stdout.readline().startswith("ready"):
            raise RuntimeError(f"the banner server did not start:\n{tail(os.path.join(w, 'banner.log'))}")
        self.wait_ports("nginx", nginx, "nginx-error.log", [(A4["WEB"], 80), (A6["WEB"], 443), (A4["H2"], 443)])
        self.wait_ports("tcp services", banner, "banner.log", [(A4["SSH"], 25), (A6["SSH"], 5671)])
        self.wait_ports("unbound", good, "unbound.log", [(A4["DNS"], 53), (A6["DNS"], 53), (A4["DNS"], 853)])
        self.wait_ports("unbound (refusing)", refusing, "unbound-refusing.log", [(A4["REFUSING"], 53)])
        versions = {
            "nginx": run("nginx", "-v", check=False).stderr.strip().split("/")[-1],
            "unbound": run("unbound", "-V", check=False).stdout.split("\n")[0].replace("Version ", ""),
        }
        return versions

    def close(self):
        if self.probe_worker:
            self.probe_worker.stop()
        stop_all(self.processes, grace=3)
        self.processes = []
        self.spaces.close()
        self.etc.close()
