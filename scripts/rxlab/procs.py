"""Processes the labs start: each one remembered, stopped by its PID (SIGTERM, then SIGKILL after a
grace period), never by name."""

import os
import subprocess
import sys


def stop(proc, grace=5.0, kill_wait=None):
    """SIGTERM, then SIGKILL when `proc` has not exited within `grace` seconds; returns its exit
    status. A process that is gone already (or None) is left alone."""
    if proc is None:
        return None
    if proc.poll() is None:
        try:
            proc.terminate()
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(kill_wait)
        except ProcessLookupError:
            pass
    return proc.returncode


def stop_all(procs, grace=5.0):
    """Stops many at once: SIGTERM to all first, then waits for each (SIGKILL after `grace`)."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(grace)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def start_module(ns, module_args, log_path, expect, processes):
    """Runs `python -m MODULE ARGS...` (an rxlab helper) in namespace `ns`, appended to
    `processes`; returns its Popen once its first line starts with `expect` (RuntimeError if not)."""
    scripts = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    p = subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-m", *module_args],
        stdout=subprocess.PIPE,
        stderr=open(log_path, "a"),
        text=True,
        env=dict(os.environ, PYTHONPATH=scripts, PYTHONDONTWRITEBYTECODE="1"),
    )
    processes.append(p)
    line = p.stdout.readline()
    if not line.startswith(expect):
        raise RuntimeError(f"{' '.join(module_args)} in {ns} did not start: {line!r}")
    return p
