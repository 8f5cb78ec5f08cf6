"""The captive lab's DHCP clients in cli, as a bench uses them (Bench inherits DhcpClients):
busybox udhcpc asking for option 114 and ISC dhclient -6 asking for option 103, each with a
script of the lab's that calls the shipped hook (deploy/hooks/captive-portal-hook, or the one
RXCAP_HOOK names) with the client's environment and RX_CAPTIVE_PORTAL_DIR set to the bench's
hook directory, and logs each event with its time. Their lease, pid and configuration files
stay in the bench's directory."""

import os
import signal
import subprocess

from ..util import ROOT, tail, wait_until

HOOK = os.environ.get("RXCAP_HOOK") or os.path.join(ROOT, "deploy", "hooks", "captive-portal-hook")


class DhcpClients:
    def script(self, name, body):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, 0o755)
        return path

    def hook_call(self, event):
        return f'RX_CAPTIVE_PORTAL_DIR={self.hooks} {HOOK} "{event}"; rc=$?\n'

    def start_udhcpc(self):
        """busybox udhcpc on lan0 asking for option 114, its script configuring lan0 and then
        calling the hook; returns when it holds a lease (RuntimeError otherwise)."""
        events = self.path("udhcpc-events.log")
        wrapper = self.script(
            "udhcpc-script",
            "#!/bin/sh\n# udhcpc's script in the captive lab: lan0 as udhcpc says, then the hook.\n"
            'case "$1" in\n  deconfig) ip -4 addr flush dev "$interface" scope global ;;\n'
            '  bound|renew)\n    ip -4 addr replace "$ip/$mask" dev "$interface"\n'
            '    [ -z "$router" ] || ip -4 route replace default via "${router%% *}" dev "$interface" metric 100 ;;\n'
            "esac\n" + self.hook_call("$1")
            + f'echo "$1 $(date +%s.%N) hook=$rc opt114=${{opt114:-}}" >> {events}\nexit 0\n',
        )  # fmt: skip
        argv = ["ip", "netns", "exec", self.cli, "busybox", "udhcpc", "-f", "-i", "lan0", "-s", wrapper, "-O", "114",
                "-t", "10", "-T", "1", "-A", "1"]  # fmt: skip
        self.udhcpc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=open(self.path("udhcpc.log"), "w"), stderr=subprocess.STDOUT
        )
        self.processes.append(self.udhcpc)
        if not wait_until(lambda: "bound " in tail(events, 5), 15, 0.1):
            raise RuntimeError(f"udhcpc got no lease: {tail(self.path('udhcpc.log'), 4)}")

    def renew(self):
        """udhcpc renews its lease now (SIGUSR1): a DHCPREQUEST, the options the server has now."""
        self.udhcpc.send_signal(signal.SIGUSR1)

    def start_dhclient6(self):
        """ISC dhclient -6 on lan0 asking for option 103, its files in the bench's directory, its
        script only calling the hook (lan0 keeps its static address)."""
        events = self.path("dhclient6-events.log")
        conf = self.path("dhclient6.conf")
        with open(conf, "w") as f:
            f.write("also request dhcp6.v6-captive-portal;\n")
        wrapper = self.script(
            "dhclient6-script",
            "#!/bin/sh\n# dhclient's script in the captive lab: the hook only.\n" + self.hook_call("$reason")
            + f'echo "$reason $(date +%s.%N) hook=$rc cp=${{new_dhcp6_v6_captive_portal:-}}" >> {events}\nexit 0\n',
        )  # fmt: skip
        argv = ["ip", "netns", "exec", self.cli, "dhclient", "-6", "-d", "-v", "-cf", conf, "-sf", wrapper,
                "-lf", self.path("dhclient6.leases"), "-pf", self.path("dhclient6.pid"), "lan0"]  # fmt: skip
        self.dhclient = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=open(self.path("dhclient6.log"), "w"), stderr=subprocess.STDOUT
        )
        self.processes.append(self.dhclient)
        return events
