"""The home router's addresses, tools and texts (homerouter.py builds the network with them):
the private mounts dnsmasq and openNDS share, the DHCP client's event script, openNDS's
configuration and a one-request HTTP client run in the home."""

LAN_V4, LAN_V4_NET = "198.18.1.1", "198.18.1.0/24"
LAN_V6, HOME_V6 = "2001:db8:14::1", "2001:db8:14::2"
LAN_V6_NET = "2001:db8:14::/64"
WAN_V4, INET_V4 = "203.0.113.2", "203.0.113.1"
WAN_V6, INET_V6 = "2001:db8:15::2", "2001:db8:15::1"
UPSTREAM_DNS = "198.51.100.53"
# The lab DNS answers with a TTL of 60 s: an entry fetched just before an outage could expire
# during it, so dnsmasq keeps every answer at least this long (its --min-cache-ttl).
MIN_CACHE_TTL = 300
# Our tables (stop_opennds deletes every other one): the NAT, and one per fault so that faults
# combine and each undo is deleting its table.
OWN_NFT_TABLES = {
    ("ip", "rxnat"),
    ("inet", "rxfault"),
    ("netdev", "rxgw"),
    ("inet", "rxdns"),
    ("inet", "rxmtu"),
    ("inet", "rxgwcount"),
}
LAN_MTU = 1500  # every veth of the lab; wan_mtu(None) puts the WAN back to it
TOOLS = (
    "dnsmasq",
    "opennds",
    "ndsctl",
    "busybox",
    "iptables-legacy",
    "ip6tables-legacy",
    "conntrack",
    "nsenter",
    "unshare",
    "getent",
)

# Runs as root inside the router namespace under `unshare -m --propagation private`, then becomes
# dnsmasq: its PID is the anchor of the private mount namespace that openNDS joins later.
PRIVATE_MOUNTS = r"""
set -eu
W=$1; shift
mount -t tmpfs -o size=32m,mode=755 rxlab-router "$W/priv"
mkdir -p "$W/priv/tmp/rxbin" "$W/priv/run/tmpfiles.d" "$W/priv/etc-up" "$W/priv/etc-work"
chmod 1777 "$W/priv/tmp"
mount -t overlay rxlab-etc -o "lowerdir=/etc,upperdir=$W/priv/etc-up,workdir=$W/priv/etc-work" /etc
cp "$W/opennds.conf" /etc/opennds/opennds.conf
mount --bind /bin/true "$(command -v systemctl || echo /usr/bin/systemctl)" 2>/dev/null \
  || { printf '#!/bin/sh\nexit 0\n' > "$W/priv/tmp/rxbin/systemctl"; chmod +x "$W/priv/tmp/rxbin/systemctl"; }
mount --bind "$W/priv/run" /run
mount --bind "$W/priv/tmp" /tmp
ln -s "$(command -v iptables-legacy)" /tmp/rxbin/iptables
ln -s "$(command -v ip6tables-legacy)" /tmp/rxbin/ip6tables
: > /tmp/dhcp.leases
exec "$@"
"""

UDHCPC_SCRIPT = """#!/bin/sh
# busybox udhcpc event script: the lease sets lan0's IPv4 address, the default route and the
# resolver (the file `ip netns exec` bind-mounts over /etc/resolv.conf).
case "$1" in
  bound|renew)
    ip -4 addr flush dev "$interface"
    ip addr add "$ip/${mask:-24}" dev "$interface"
    for r in $router; do ip route replace default via "$r" dev "$interface"; break; done
    : > RESOLV.new
    for d in $dns; do echo "nameserver $d" >> RESOLV.new; done
    cat RESOLV.new > RESOLV && rm -f RESOLV.new
    echo "lease $ip/$mask router $router dns $dns"
    ;;
  deconfig) ip -4 addr flush dev "$interface" ;;
esac
"""

# openNDS's own packaged rule sets (DNS and DHCP to the router stay open before login), for
# the LAN interface; everything else defaults.
OPENNDS_CONF = """GatewayInterface rlan
GatewayName rxlab
debuglevel 1
FirewallRuleSet authenticated-users {
}
FirewallRuleSet preauthenticated-users {
}
FirewallRuleSet users-to-router {
    FirewallRule allow udp port 53
    FirewallRule allow tcp port 53
    FirewallRule allow udp port 67
    FirewallRule allow tcp port 80
}
"""

# One plain-HTTP request from the home namespace (no curl needed): prints "STATUS LOCATION".
HTTP_ONE = """import http.client, sys
c = http.client.HTTPConnection(sys.argv[2], timeout=3)
c.request(sys.argv[1], sys.argv[3])
r = c.getresponse()
print(r.status, r.getheader("Location") or "")
"""
