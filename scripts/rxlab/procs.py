"""Processes the labs start: each one remembered, stopped by its PID (SIGTERM, then SIGKILL after a
grace period), never by name."""

import subprocess


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
