"""The network of the fault lab's `filtered` phase: a router that filters what the client may
send, and a forward proxy on it, between the exporter and a lab internet with real DNS servers.

    client (the exporter)  --flan0/flan-->  router (NAT, nft, squid)  --fwan/fup-->  upstream

- upstream (the lab "internet"): unbound on 198.51.100.53 serving the static zone lab.example
  over UDP/53, TCP/53 and DNS over TLS on 853 (certificate for dns.lab.example and the IP), and
  reachability-lab's HTTP :80 / HTTPS :443 on 198.51.100.80 (www.lab.example; /generate_204
  answers 204), both on the upstream's loopback. Certificates come from a CA of this phase that
  the exporter's trust store does not hold: a probe verifies only with its own `tls.ca_file`.
- router: forwarding and NAT (nft masquerade on the WAN), the faults as an nft forward chain,
  and squid on the LAN address: :3128 open to the LAN, :3129 the same but basic auth
  (basic_ncsa_auth, an htpasswd file made here with two users); nothing listens on :3130.
  squid tunnels CONNECT to 443 and 4443 only (a CONNECT to 8443 gets 403; to 4443, where
  nothing listens, 503), and answers a GET to :8080 (nothing there either) with 503. squid's
  own traffic is output, not forward: the forward faults never touch it. It resolves names
  with the upstream unbound (`dns_nameservers`), so a CONNECT www.lab.example:443 works
  without any resolver file.
- client: 198.18.2.2/24, default via the router; /etc/netns/<client>/resolv.conf names the
  upstream unbound (nothing in the lab falls back to the host's resolver).

Addresses are benchmark/documentation ranges only (LAN 198.18.2.0/24, WAN 198.18.3.0/24, the
upstream's 198.51.100.53 and .80), as in the rest of the lab: the exporter takes an RFC 1918
answer for a public name as a portal signal (`private_address`), and the upstream must count as
the internet (beyond the client's gateway; no --probe.trust-local-targets). Nothing routes out
of the namespaces: the upstream has no default route at all.
"""

import os
import shutil
import subprocess
import time

from .. import certs, netns
from ..util import CURL_STATUS, connects, read_from, require_tools, size_of, tail
from ..util import run as sh
from .filtered_texts import SQUID_CONF, UNBOUND_CONF

LAN_NET, ROUTER_LAN, CLIENT_IP = "198.18.2.0/24", "198.18.2.1", "198.18.2.2"
ROUTER_WAN, UPSTREAM_WAN = "198.18.3.2", "198.18.3.1"
DNS_IP, WEB_IP = "198.51.100.53", "198.51.100.80"
ZONE, WEB_NAME, DNS_NAME, MX_NAME = "lab.example", "www.lab.example", "dns.lab.example", "mail.lab.example"
TXT_TEXT = "rxlab filtered phase"
PROXY_PORT, AUTH_PROXY_PORT, CLOSED_PORT = 3128, 3129, 3130
PROXY_USER, PROXY_PASSWORD = "rxlab", "s3cret-lab"
# The wrong-password probes use another existing user: squid keeps one credential per user name,
# and the same name with a right and a wrong password at once makes it refuse the right one now
# and then (what the auth phase would then measure is squid's cache, not the exporter).
OTHER_USER, OTHER_PASSWORD = "rxother", "other-pass"
FAULT_TABLE = ("inet", "rxffault")
TOOLS = ("unbound", "unbound-checkconf", "squid", "conntrack", "kdig", "curl")
BASIC_NCSA = "/usr/lib/squid/basic_ncsa_auth"


class FilteredNet:
    """The three namespaces, the certificates and the daemons. Namespaces and processes are
    registered with the Lab as soon as they exist, so `Lab.close()` removes them on every
    path; `close()` here removes /etc/netns/<client>."""

    def __init__(self, lab):
        self.lab = lab
        p = lab.prefix
        self.client, self.router, self.upstream = f"{p}-fclient", f"{p}-frouter", f"{p}-fup"
        self.work = os.path.join(lab.work, "filtered")
        self.resolv_conf = netns.ResolvConf()
        self.ca = os.path.join(self.work, "ca.pem")
        self.unbound = self.squid = self.web = None

    # ---- topology -------------------------------------------------------------------------
    def build_namespaces(self):
        """The namespaces, links, routes, NAT, the client's resolver file and the certificates."""
        require_tools("filtered phase", TOOLS, [BASIC_NCSA] if not os.access(BASIC_NCSA, os.X_OK) else [])
        # squid drops to the `proxy` user: its files need a path that user can traverse.
        os.chmod(self.lab.work, 0o711)
        os.makedirs(self.work, mode=0o755, exist_ok=True)
        lab, c, r, u = self.lab, self.client, self.router, self.upstream
        lab.add_network((c, r, u), ((c, "flan0", r, "flan"), (r, "fwan", u, "fup")))
        # No ICMP rate limit on the router: its "port unreachable" for each rejected UDP query
        # is the fault under test (the kernel's default, about one per second per client, would
        # turn some refusals into timeouts).
        netns.sysctl(r, "net.ipv4.ip_forward=1", "net.ipv4.icmp_ratelimit=0")
        for ns, dev, addr in (
            (c, "flan0", CLIENT_IP),
            (r, "flan", ROUTER_LAN),
            (r, "fwan", ROUTER_WAN),
            (u, "fup", UPSTREAM_WAN),
        ):
            netns.addresses(ns, dev, f"{addr}/24")
        for address in (DNS_IP, WEB_IP):
            sh("ip", "-n", u, "addr", "add", f"{address}/32", "dev", "lo")
        sh("ip", "-n", c, "route", "add", "default", "via", ROUTER_LAN)
        sh("ip", "-n", r, "route", "add", "default", "via", UPSTREAM_WAN)
        netns.masquerade(r, "fwan", ("ip", "rxfnat"))
        self.resolv_conf.write(self.client, f"nameserver {DNS_IP}\n")
        self.make_certificates()

    def start_daemons(self):
        """unbound and the web server upstream, squid on the router; each waited for on its
        ports, so the calling thread must be in the client namespace."""
        self.start_unbound()
        self.start_web()
        self.start_squid()

    def make_certificates(self):
        """This phase's CA, and leaves for the DNS-over-TLS server and the web server, each with
        its name and its IP address as subject alternative names."""
        w = self.work
        certs.make_ca(w, "rxlab-filtered-ca")
        for leaf, name, ip in (("dns", DNS_NAME, DNS_IP), ("www", WEB_NAME, WEB_IP)):
            _, key = certs.make_leaf(w, leaf, name, f"DNS:{name},IP:{ip}")
            os.chmod(key, 0o644)

    def start_unbound(self):
        conf = os.path.join(self.work, "unbound.conf")
        with open(conf, "w") as f:
            f.write(
                UNBOUND_CONF.format(
                    dns=DNS_IP,
                    work=self.work,
                    zone=ZONE,
                    web=WEB_NAME,
                    web_ip=WEB_IP,
                    dns_name=DNS_NAME,
                    txt=TXT_TEXT,
                    mx=MX_NAME,
                )
            )
        sh("unbound-checkconf", conf)
        log = os.path.join(self.work, "unbound.log")
        self.unbound = self.daemon(self.upstream, ["unbound", "-d", "-c", conf], log)
        self.wait_ports("unbound", self.unbound, log, [(DNS_IP, 53), (DNS_IP, 853)])

    def start_web(self):
        """reachability-lab, the lab's own HTTP/HTTPS upstream, with this phase's certificate."""
        w = self.work
        log = os.path.join(w, "web.log")
        p = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                self.upstream,
                self.lab.args.lab_bin,
                f"--control={w}/web.sock",
                f"--cert={w}/www.pem",
                f"--key={w}/www.key",
                f"--wrong-cert={w}/www.pem",
                f"--wrong-key={w}/www.key",
                f"--address={WEB_IP}",
            ],
            stdout=subprocess.PIPE,
            stderr=open(log, "w"),
            text=True,
        )
        self.lab.processes.append(p)
        self.web = p
        line = p.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"reachability-lab in {self.upstream} did not start: {line!r}\n{tail(log)}")

    def write_htpasswd(self):
        """user:APR1 hash lines for basic_ncsa_auth, made by openssl."""
        path = os.path.join(self.work, "htpasswd")
        with open(path, "w") as f:
            for user, password in ((PROXY_USER, PROXY_PASSWORD), (OTHER_USER, OTHER_PASSWORD)):
                f.write(f"{user}:{sh('openssl', 'passwd', '-apr1', password).stdout.strip()}\n")
        os.chmod(path, 0o644)
        return path

    def start_squid(self):
        sq = os.path.join(self.work, "squid")
        os.makedirs(sq, exist_ok=True)
        shutil.chown(sq, "proxy", "proxy")
        conf = os.path.join(self.work, "squid.conf")
        with open(conf, "w") as f:
            f.write(
                SQUID_CONF.format(
                    lan=ROUTER_LAN,
                    port=PROXY_PORT,
                    auth_port=AUTH_PROXY_PORT,
                    work=sq,
                    dns=DNS_IP,
                    ncsa=BASIC_NCSA,
                    htpasswd=self.write_htpasswd(),
                    lan_net=LAN_NET,
                )
            )
        os.chmod(conf, 0o644)
        log = os.path.join(self.work, "squid.log")
        self.squid = self.daemon(self.router, ["squid", "-N", "-f", conf], log)
        self.wait_ports(
            "squid",
            self.squid,
            log,
            [(ROUTER_LAN, PROXY_PORT), (ROUTER_LAN, AUTH_PROXY_PORT)],
            extra=os.path.join(sq, "cache.log"),
        )

    def daemon(self, ns, argv, log):
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns] + argv,
            stdin=subprocess.DEVNULL,
            stdout=open(log, "w"),
            stderr=subprocess.STDOUT,
        )
        self.lab.processes.append(p)
        return p

    def wait_ports(self, what, process, log, ports, extra=None, limit=15.0):
        """Waits until every (address, port) accepts a TCP connection from the client (this
        thread is in the client namespace: the LAN and, through the router, the upstream)."""
        deadline = time.time() + limit
        while time.time() < deadline:
            if process.poll() is not None:
                break
            if all(connects(a, p) for a, p in ports):
                return
            time.sleep(0.1)
        state = f"exited {process.returncode}" if process.poll() is not None else f"not listening after {limit:.0f} s"
        raise RuntimeError(f"{what} {state}:\n{tail(log)}{tail(extra) if extra else ''}")

    # ---- faults ---------------------------------------------------------------------------
    def filter(self, rules):
        """The router's forward filter: `rules` (nft statements) replace whatever was there;
        no rules removes the table. Conntrack is flushed either way (NAT entries of running
        flows would otherwise outlive the change)."""
        family, name = FAULT_TABLE
        netns.nft_delete(self.router, family, name)
        if rules:
            body = "\n    ".join(rules)
            netns.nft(
                self.router,
                f"table {family} {name} {{\n  chain forward {{\n    type filter hook forward priority 0;\n"
                f"    {body}\n  }}\n}}\n",
            )
        netns.flush_conntrack(self.router)

    def filter_counters(self):
        """The fault rules' packet counters (text), to show the fault saw traffic."""
        family, name = FAULT_TABLE
        p = sh("ip", "netns", "exec", self.router, "nft", "list", "table", family, name, check=False)
        return " ".join(line.strip() for line in p.stdout.splitlines() if "counter" in line)

    # ---- independent witnesses: what ordinary clients see from the client namespace ----------
    def dig(self, transport, name=WEB_NAME, rtype="A"):
        """kdig from the client over `transport` (udp, tcp, tls): (ok, first answer or error)."""
        opts = {"udp": ["+notcp"], "tcp": ["+tcp"], "tls": ["+tls", f"+tls-ca={self.ca}", f"+tls-hostname={DNS_NAME}"]}[
            transport
        ]
        p = sh(
            "ip",
            "netns",
            "exec",
            self.client,
            "kdig",
            "+short",
            "+time=1",
            "+retry=0",
            *opts,
            f"@{DNS_IP}",
            name,
            rtype,
            check=False,
            timeout=10,
        )
        lines = [line for line in p.stdout.splitlines() if line.strip()]
        ok = p.returncode == 0 and bool(lines) and not any(line.startswith(";;") for line in lines)
        return ok, lines[0] if ok else (lines or [f"kdig exit {p.returncode}"])[-1].lstrip("; ")

    def curl(self, url, proxy=None):
        """curl from the client (the phase CA trusted): the status code, or curl's error."""
        p = sh(
            "ip",
            "netns",
            "exec",
            self.client,
            *CURL_STATUS,
            "--max-time",
            "2",
            "--cacert",
            self.ca,
            *(["-x", proxy] if proxy else []),
            url,
            check=False,
            timeout=10,
        )
        if p.returncode != 0:
            return f"curl exit {p.returncode}"
        return p.stdout.strip()

    def squid_log(self, mark=0):
        """squid's access log since byte `mark` (what went through the proxy)."""
        return read_from(os.path.join(self.work, "squid", "access.log"), mark)

    def squid_log_mark(self):
        return size_of(os.path.join(self.work, "squid", "access.log"))

    def close(self):
        self.resolv_conf.close()
