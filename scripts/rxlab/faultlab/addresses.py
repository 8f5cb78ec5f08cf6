"""What every part of the fault lab shares: the lab's addresses and port, logging, and running
a command (its output in the error when it fails)."""
import subprocess

CLONE_NEWNET = 0x40000000
PORT = 10361
V4_NET = "198.51.100.1"
V4_DNS = "198.51.100.53"
V6_NET = "2001:db8:100::1"
V6_DNS = "2001:db8:100::53"
LAB_NAME = "www.example.com"


def log(text):
    print(text, flush=True)


def run(*cmd, check=True, quiet=False, input_text=None):
    """Runs a command; raises with its output when it fails and `check` is set."""
    p = subprocess.run(cmd, capture_output=True, text=True, input=input_text)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stdout}{p.stderr}")
    return p

