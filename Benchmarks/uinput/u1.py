#!/usr/bin/env python3
"""u1.py - U1, the latency a grab-and-re-emit program adds (docs/benchmarks.md, "U1: added
latency of the virtual device"), run as root inside the fast guest (scripts/bench-uinput boots
it under QEMU icount; nothing here needs systemd).

Usage: u1.py BIN_DIR U1BENCH OUT_DIR

Four forwarders, one after the other, at 1 kHz (2,000 frames) and 8 kHz (8,000 frames):
  floor               `u1bench floor SRC`
  floor-loop          `u1bench floor --event-loop SRC`: the floor with evflowd's system calls
                      (epoll_wait, read, write, the read that answers EAGAIN) and none of its code
  interception-tools  `interception -g SRC | uinput -d SRC`
  evflowd             BIN_DIR/evflowd started here, as root, with the shipped evflow.yaml and
                      one `output: virtual` rule for the source (started only for its own rows:
                      it would read the other forwarders' twins too)
each fed and measured by `u1bench drive`. The CPU time of each forwarder (all its processes
and threads, from /proc/PID/task/TID/schedstat, the scheduler's own nanosecond count) is
sampled around exactly the measured frames (u1bench's ready/done handshake), and with it the
read and write system calls per frame (/proc/PID/io).
Prints the table; writes OUT_DIR/u1.md, OUT_DIR/u1.jsonl and each measurement's per-frame
latencies, OUT_DIR/raw-LABEL-RATE.txt (u1bench's --raw: to compare runs frame by frame). Exit status 1 when a forwarder
lost a frame, reordered one or failed.
"""
import json
import os
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RATES = ((1000, 2000), (8000, 8000))       # (Hz, frames measured)
TWIN_SUFFIX = " (evflow)"                   # evflowd's twin: the source's name and this


def descendants(pid):
    """PID and every process below it (interception-tools is a shell pipeline)."""
    children = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                stat = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_ns(pid):
    """Nanoseconds on a CPU of PID's processes and their live threads: the scheduler's own
    count (schedstat's first field). (utime/stime of /proc/PID/stat were tried for a user and
    system split: they are sampled at the timer tick, a few ticks per run, and the tick beats
    with the 1-kHz source; the floor came out 0 % user in one run and 100 % in the next.)"""
    ns = 0
    for p in descendants(pid):
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                ns += int(open(f"/proc/{p}/task/{t}/schedstat").read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return ns


def syscalls(pid):
    """(read, write) system calls of PID's processes so far (syscr, syscw of /proc/PID/io: the
    whole thread group's, read(2)/readv(2) and write(2)/writev(2) families)."""
    r = w = 0
    for p in descendants(pid):
        try:
            io = dict(line.split(": ") for line in open(f"/proc/{p}/io").read().splitlines())
            r, w = r + int(io["syscr"]), w + int(io["syscw"])
        except (OSError, ValueError, KeyError):
            pass
    return r, w


def drive(bench, label, rate, count, start_forwarder, ends_with_source=True, raw=None):
    """One measurement; START_FORWARDER(source node) returns the forwarder's Popen, which
    ends when the source is destroyed if ENDS_WITH_SOURCE (evflowd does not)."""
    src = f"evflow-u1 {label} {rate}"
    twin = {"floor": f"{src} (floor)", "floor-loop": f"{src} (floor)", "interception-tools": src, "evflowd": src + TWIN_SUFFIX}[label]
    d = subprocess.Popen([bench, "drive", "--name", src, "--twin", twin, "--rate", str(rate), "--count",
                          str(count), "--label", label] + (["--raw", raw] if raw else []), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    fwd = None
    try:
        first = d.stdout.readline().split()
        if first[:1] != ["source"]:
            raise RuntimeError(f"u1bench drive: {first} {d.stderr.read()}")
        fwd = start_forwarder(first[1])
        if d.stdout.readline().strip() != "ready":
            raise RuntimeError(f"u1bench drive: no 'ready': {d.stderr.read()}")
        t0, io0 = cpu_ns(fwd.pid), syscalls(fwd.pid)
        d.stdin.write("\n"); d.stdin.flush()
        if d.stdout.readline().strip() != "done":
            raise RuntimeError(f"u1bench drive: no 'done': {d.stderr.read()}")
        t1, io1 = cpu_ns(fwd.pid), syscalls(fwd.pid)
        d.stdin.write("\n"); d.stdin.flush()
        out, err = d.communicate(timeout=300)
        row = json.loads(out.strip().splitlines()[-1])
        row["cpu_ms_per_1000"] = round((t1 - t0) / 1e6 / max(row["received"], 1) * 1000, 2)
        row["reads_per_frame"] = round((io1[0] - io0[0]) / max(row["received"], 1), 2)
        row["writes_per_frame"] = round((io1[1] - io0[1]) / max(row["received"], 1), 2)
        return row
    finally:
        if d.poll() is None:
            d.kill()
        if fwd is not None and ends_with_source:
            try:
                fwd.wait(timeout=30)             # the source is gone: it ends
            except subprocess.TimeoutExpired:
                fwd.kill()


def evflowd(bin_dir, work):
    """evflowd as root with the shipped configuration and the source's `output: virtual` rule."""
    shipped = open(os.path.join(REPO, "systemd/evflow.yaml")).read()
    if "devices: []\n" not in shipped:
        raise RuntimeError("systemd/evflow.yaml has no `devices: []` line to replace")
    config = os.path.join(work, "evflow.yaml")
    with open(config, "w") as f:
        f.write(shipped.replace("devices: []\n", 'devices:\n  - match: { name: "evflow-u1 evflowd *" }\n'
                                "    output: virtual\n"))
    sock = os.path.join(work, "evflowd.sock")
    p = subprocess.Popen([os.path.join(bin_dir, "evflowd"), "--config", config, "--socket", sock,
                          "--log-level", "warning"], stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not os.path.exists(sock):
        if p.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"evflowd did not start (exit {p.poll()})")
        time.sleep(0.05)
    return p


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    bin_dir, bench, out_dir = sys.argv[1:]
    work = "/run/evflow-u1"
    os.makedirs(work, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    rows = []

    def measure(label, rate, count, start_forwarder, ends_with_source=True):
        try:
            rows.append(drive(bench, label, rate, count, start_forwarder, ends_with_source,
                              os.path.join(out_dir, f"raw-{label}-{rate}.txt")))
        except (RuntimeError, ValueError, IndexError, subprocess.TimeoutExpired) as e:
            rows.append({"label": label, "rate": rate, "sent": count, "received": 0, "error": str(e)})
        print(json.dumps(rows[-1]), flush=True)

    for rate, count in RATES:
        measure("floor", rate, count, lambda node: subprocess.Popen([bench, "floor", node], stderr=subprocess.DEVNULL))
        measure("floor-loop", rate, count,
                lambda node: subprocess.Popen([bench, "floor", "--event-loop", node], stderr=subprocess.DEVNULL))
        # (Debian installs interception-tools' `intercept` as `interception`.)
        measure("interception-tools", rate, count, lambda node: subprocess.Popen(
            ["bash", "-c", f"interception -g {node} | uinput -d {node}"], stderr=subprocess.DEVNULL))
        daemon = evflowd(bin_dir, work)
        try:
            measure("evflowd", rate, count, lambda node: daemon, ends_with_source=False)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=30)

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "u1.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    table = ["| rate (achieved) | program | frames through | SYN_DROPPED | p50 µs | p99 µs | max µs | p50 / floor "
             "| p99 / floor | CPU ms / 1,000 frames | reads, writes / frame |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        floor = next(x for x in rows if x["rate"] == r["rate"] and x["label"] == "floor")
        if "error" in r or "error" in floor:
            table.append(f"| {r['rate']} Hz | {r['label']} | failed: {r.get('error', 'no floor')} | | | | | | | | |")
            continue
        table.append(f"| {r['rate']} Hz ({r['achieved_hz']:.0f}) | {r['label']} | {r['received']}/{r['sent']} | "
                     f"{r['syn_dropped']} | {r['p50_us']:.0f} | {r['p99_us']:.0f} | {r['max_us']:.0f} | "
                     f"{r['p50_us'] / floor['p50_us']:.2f} | {r['p99_us'] / floor['p99_us']:.2f} | "
                     f"{r['cpu_ms_per_1000']:.1f} | {r['reads_per_frame']:.2f}, {r['writes_per_frame']:.2f} |")
    print("\n".join(table), flush=True)
    with open(os.path.join(out_dir, "u1.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    complete = all(r["received"] == r["sent"] and r.get("in_order") for r in rows)
    print(f"u1: {'every frame through, in order' if complete else 'a forwarder lost or reordered frames, or failed'}")
    sys.exit(0 if complete else 1)


if __name__ == "__main__":
    main()
