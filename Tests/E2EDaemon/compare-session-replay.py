#!/usr/bin/env python3
"""Record → replay fidelity (issue #12): replays a session recorded in the daemon suite's guest
on this machine and compares the filtered frames with the ones the guest's daemon delivered live.

  compare-session-replay.py [--bin-dir DIR] [--replay-output FILE] SESSION_DIR

SESSION_DIR is what the daemon suite's `session` case wrote (.build-e2e-out/session):
  live.session          `evflowctl record --all` of the guest's daemon, with the hot-plugged devices
  live-filtered.jsonl   `evflowctl watch --json` (filtered) of the same daemon meanwhile: the
                        DEVICE and FRAME lines of the hot-plugged devices
  evflow.yaml           the configuration the guest's daemon ran with

The replay: `evflowd --replay live.session --speed 1 --config evflow.yaml` on a socket of its
own, and `evflowctl watch --json` connected before the session's first hot-plug (the session
starts with a few quiet seconds for that; an attempt whose watcher was late is retried). At
--speed 1 adds and removals come at their recorded times too, so a filter window still open at a
removal ends as it did live; event times are the recording's whatever the pace.
It writes replay-filtered.jsonl (the same devices' lines) and the two normalised forms,
live.normalised.txt and replay.normalised.txt, into SESSION_DIR.
--replay-output FILE compares FILE (watcher lines) instead of running a replay.

Normalised form, compared byte for byte: per device (by name, with its id), in stream order,
"added", each FRAME as its time minus the time of the first FRAME of any of these devices
(nanoseconds) and its events (with an event's own time, likewise relative, if it has one),
and "removed". Exit status: 0 identical, 1 different (the first difference is printed),
2 the replay could not be run.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from e2e_common import Failure, json_messages, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def normalise(msgs, names):
    """The comparable text of the DEVICE/FRAME messages of the devices named NAMES."""
    ids = {}                                   # id -> name, from DEVICE notices
    for m in msgs:
        if m.get("class") == "DEVICE" and m["device"]["name"] in names:
            ids[m["device"]["id"]] = m["device"]["name"]
    frames = [m for m in msgs if m.get("class") == "FRAME" and m.get("device") in ids]
    t0 = min((m["time"] for m in frames), default=0)
    per_device = {}
    for m in msgs:
        cls = m.get("class")
        if cls == "DEVICE" and m["device"]["id"] in ids:
            key = (m["device"]["name"], m["device"]["id"])
            per_device.setdefault(key, []).append(m["action"])
        elif cls == "FRAME" and m.get("device") in ids:
            key = (ids[m["device"]], m["device"])
            events = []
            for e in m["events"]:
                own = f"@{e['time'] - t0:+d} " if "time" in e else ""
                events.append(f"{own}{e['type']} {e['code']} {e['value']}")
            per_device.setdefault(key, []).append(f"{m['time'] - t0:+015d} {m.get('stream', '?')} " + ", ".join(events))
    text = []
    for (name, did) in sorted(per_device):
        text.append(f"device {json.dumps(name)} {did}\n")
        text.extend(f"  {line}\n" for line in per_device[(name, did)])
    return "".join(text), sum(len(v) for v in per_device.values()), len(frames)


def session_seconds(path):
    """The time of the session's last timeline line."""
    last = 0.0
    for line in open(path):
        if line.startswith(("add: ", "remove: ", "E: ")):
            last = float(line.split()[1])
    return last


def replay_once(bin_dir, session_dir, live_ids, removes, tmp):
    """One replay into a watcher; returns its output lines, or None when the watcher was late."""
    sock = os.path.join(tmp, "evflowd.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    session = os.path.join(session_dir, "live.session")
    derr, wout_path, werr = (os.path.join(tmp, n) for n in ("evflowd.err", "watch.out", "watch.err"))
    env = dict(os.environ)
    for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC", "JOURNAL_STREAM"):
        env.pop(k, None)
    started = time.monotonic()
    daemon = subprocess.Popen([os.path.join(bin_dir, "evflowd"), "--replay", session, "--speed", "1",
                               "--config", os.path.join(session_dir, "evflow.yaml"), "--socket", sock,
                               "--log-level", "notice"],
                              stdout=subprocess.DEVNULL, stderr=open(derr, "w"), env=env)
    watch = None
    try:
        wait_until("evflowd's socket", lambda: os.path.exists(sock) or daemon.poll() is not None, timeout=30, step=0.05)
        if daemon.poll() is not None:
            raise Failure(f"evflowd exited {daemon.returncode}: {open(derr).read()}")
        watch = subprocess.Popen([os.path.join(bin_dir, "evflowctl"), "watch", "--socket", sock, "--json"],
                                 stdout=open(wout_path, "w"), stderr=open(werr, "w"), env=env)

        def reply():
            for m in json_messages(open(wout_path)):
                if m.get("class") == "WATCH":
                    return m
            return None
        got = wait_until("the WATCH reply", lambda: reply() or watch.poll() is not None, timeout=30, step=0.05)
        if watch.poll() is not None:
            raise Failure(f"evflowctl watch exited {watch.returncode}: {open(werr).read()}")
        joined = time.monotonic() - started
        late = sorted(set(got.get("matched", [])) & live_ids)
        if late:
            print(f"compare-session-replay: the watcher joined {joined:.1f} s after evflowd started, when "
                  f"{late} was already present: too late for this attempt", file=sys.stderr)
            return None
        print(f"compare-session-replay: watcher connected {joined:.1f} s after evflowd started", file=sys.stderr)

        def removed():
            n = sum(1 for m in json_messages(open(wout_path))
                    if m.get("class") == "DEVICE" and m["action"] == "removed" and m["device"]["id"] in live_ids)
            return n >= removes
        wait_until("the hot-plugged devices' removals in the replay", removed,
                   timeout=session_seconds(session) + 30, step=0.2)
        time.sleep(0.2)
        return open(wout_path).read().splitlines(keepends=True)
    finally:
        if watch and watch.poll() is None:
            watch.terminate()
            watch.wait(timeout=30)
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                rc = daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                rc = daemon.wait()
            if rc != 0:
                print(f"compare-session-replay: evflowd exited {rc} on SIGTERM: {open(derr).read()}", file=sys.stderr)


def first_difference(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else "<end>"
        y = lb[i] if i < len(lb) else "<end>"
        if x != y:
            # the device block it is in
            device = next((la[j] for j in range(min(i, len(la) - 1), -1, -1) if la[j].startswith("device ")), "?")
            ctx = "\n".join(f"    {l}" for l in la[max(0, i - 3):i])
            return i + 1, device, x, y, ctx
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("session_dir")
    ap.add_argument("--bin-dir", help="directory with evflowd and evflowctl (default: the release build's)")
    ap.add_argument("--replay-output", help="compare this watcher output instead of running a replay")
    ap.add_argument("--attempts", type=int, default=3, help="replays to try when the watcher is late")
    args = ap.parse_args()
    d = args.session_dir
    live_lines = open(os.path.join(d, "live-filtered.jsonl")).read().splitlines(keepends=True)
    live = json_messages(live_lines)
    names = {m["device"]["name"] for m in live if m.get("class") == "DEVICE"}
    live_ids = {m["device"]["id"] for m in live if m.get("class") == "DEVICE"}
    removes = sum(1 for m in live if m.get("class") == "DEVICE" and m["action"] == "removed")
    if not names:
        print(f"compare-session-replay: no DEVICE line in {d}/live-filtered.jsonl: nothing to compare")
        return 1

    if args.replay_output:
        replay_lines = open(args.replay_output).read().splitlines(keepends=True)
    else:
        bin_dir = args.bin_dir
        if not bin_dir:
            bin_dir = subprocess.run(["swift", "build", "-c", "release", "--static-swift-stdlib",
                                      "--scratch-path", ".build-release", "--show-bin-path"],
                                     cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        replay_lines = None
        with tempfile.TemporaryDirectory(prefix="evflow-session-replay.") as tmp:
            try:
                for _ in range(args.attempts):
                    replay_lines = replay_once(bin_dir, d, live_ids, removes, tmp)
                    if replay_lines is not None:
                        break
            except Failure as e:
                print(f"compare-session-replay: the replay failed: {e}")
                return 2
        if replay_lines is None:
            print(f"compare-session-replay: in {args.attempts} attempts the watcher never connected before "
                  f"the session's first hot-plug; nothing compared")
            return 2
        replay_ids = {m["device"]["id"] for m in json_messages(replay_lines)
                      if m.get("class") == "DEVICE" and m["device"]["name"] in names}
        with open(os.path.join(d, "replay-filtered.jsonl"), "w") as f:
            f.writelines(l for l, m in ((l, json.loads(l)) for l in replay_lines if l.startswith("{"))
                         if (m.get("class") == "DEVICE" and m["device"]["id"] in replay_ids)
                         or (m.get("class") == "FRAME" and m.get("device") in replay_ids))

    want, n_lines, n_frames = normalise(live, names)
    got, _, _ = normalise(json_messages(replay_lines), names)
    with open(os.path.join(d, "live.normalised.txt"), "w") as f:
        f.write(want)
    with open(os.path.join(d, "replay.normalised.txt"), "w") as f:
        f.write(got)
    diff = first_difference(want, got)
    if diff is None:
        print(f"compare-session-replay: identical: {n_frames} filtered frames of {len(names)} hot-plugged "
              f"device(s) ({', '.join(sorted(names))}), {n_lines} normalised lines, live vs replay")
        return 0
    line, device, x, y, ctx = diff
    print(f"compare-session-replay: DIFFERENT at normalised line {line} (in {device}):\n"
          f"  live:   {x}\n  replay: {y}\n  lines before it (live):\n{ctx}\n"
          f"  (whole files: {d}/live.normalised.txt, {d}/replay.normalised.txt)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
