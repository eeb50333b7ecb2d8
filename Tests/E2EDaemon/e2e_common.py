"""What the daemon suite (daemon-suite.py, in the guest) and the record → replay comparison
(compare-session-replay.py, on the host) both need: one copy, imported from beside them
(Python puts a script's own directory first on its path)."""
import json
import time


class Failure(Exception):
    """A check could not be carried out (a wait timed out, a program failed)."""


def wait_until(what, predicate, timeout=30.0, step=0.1):
    """predicate()'s first true value, polled every STEP seconds; Failure after TIMEOUT."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(step)


def json_messages(lines, cls=None):
    """The JSON objects among LINES (other lines skipped: a watcher's text, a torn last line),
    only those of class CLS when given."""
    out = []
    for line in lines:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if isinstance(m, dict) and (cls is None or m.get("class") == cls):
            out.append(m)
    return out
