#!/usr/bin/env bash
# evflow-mqtt benchmark (docs/benchmarks.md, "MQTT bridge"): on loopback, with mosquitto.
#   B1 throughput: events/s bridged from evflowd (20 replayed mice, --speed 0, looping) to a
#      subscriber of every event topic, per-frame messages, QoS 0; floor: mosquitto_pub -l
#      sending the same number of same-sized messages straight to the broker.
#   B2 latency: evflowd replaying at recorded speed; frame time (evflowd's CLOCK_MONOTONIC
#      stamp) → the subscriber's CLOCK_MONOTONIC at receipt, p50/p99; floor: a publisher that
#      stamps CLOCK_MONOTONIC into each message itself and sends it through mosquitto_pub -l.
# The subscriber is mosquitto_sub piped into Python (the same in both runs).
# Usage: Benchmarks/mqtt.sh [SECONDS]      (default 10 per measurement)
#        CONFIG=debug Benchmarks/mqtt.sh     (the debug build: no release build needed)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-10}
scripts/install-deps mosquitto mosquitto-clients >&2
config=${CONFIG:-release}
swift build -c "$config" --product evflowd >&2
swift build -c "$config" --product evflow-mqtt >&2
bin=$(swift build -c "$config" --show-bin-path)
echo "build: $config"
dir=$(mktemp -d "${TMPDIR:-/tmp}/evflow-mqtt-bench.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\nuser %s\nmax_queued_messages 100000\n' "$port" "$(id -un)" >"$dir/m.conf"
mosquitto -c "$dir/m.conf" >"$dir/m.log" 2>&1 &
sleep 0.5
mouse="Tests/Fixtures/recordings/evemu-devices/mice/Ultrathin Touch Mouse.events"
measure() {   # measure TOPIC SECONDS → "count rate p50_us p99_us payload_bytes"
    timeout "$2" mosquitto_sub -h 127.0.0.1 -p "$port" -t "$1" -F '%p' 2>/dev/null | python3 -c '
import json, sys, time
lat, n, size, t0, t1 = [], 0, 0, None, None
for line in sys.stdin:
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    n += 1; size = len(line) - 1
    t0 = t0 or now; t1 = now
    try: lat.append(now - json.loads(line)["time"])
    except Exception: pass
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] / 1000 if lat else -1
print(n, round(n / max((t1 - t0) / 1e9, 1e-9)) if n > 1 else 0, round(q(0.5)), round(q(0.99)), size)'
}
run_bridge() {   # run_bridge SPEED → starts evflowd + evflow-mqtt, sets pids
    local args=()
    for i in $(seq 20); do args+=("$mouse"); done
    "$bin/evflowd" --replay "${args[@]}" --loop --speed "$1" --socket "$dir/s.sock" 2>"$dir/d.log" & ev=$!
    for _ in $(seq 100); do [[ -S $dir/s.sock ]] && break; sleep 0.05; done
    "$bin/evflow-mqtt" --socket "$dir/s.sock" --broker 127.0.0.1 --port "$port" --hostname bench \
        --events 'types=EV_REL,EV_KEY' --outbox 100000 2>"$dir/b.log" & br=$!
    sleep 1
}
stop_bridge() { kill $br $ev; wait $br $ev 2>/dev/null || true; rm -f "$dir/s.sock"; }

run_bridge 0
read -r n1 rate1 _ _ size1 < <(measure 'evflow/bench/devices/+/events' "$secs")
grep -q "slow-consumer" "$dir/b.log" && echo "note: evflowd closed the bridge as a slow consumer during B1" >&2
stop_bridge
python3 -c "
import sys
line = '{\"time\":0,\"events\":[' + ','.join(['{\"type\":\"EV_REL\",\"code\":\"REL_X\",\"value\":1}'] * 2) + ']}'
pad = max(0, $size1 - len(line))
for i in range($n1): print(line[:-1] + ' ' * pad + '}')" >"$dir/floor.txt"
(sleep 0.5; mosquitto_pub -h 127.0.0.1 -p "$port" -t floor/tp -l <"$dir/floor.txt") &
read -r nf ratef _ _ _ < <(measure 'floor/tp' "$secs")
echo "B1 throughput: evflow-mqtt $rate1 msgs/s ($n1 messages of ~$size1 bytes in ${secs}s window); floor (mosquitto_pub -l, same count and size) $ratef msgs/s ($nf received)"

run_bridge 1
read -r n2 rate2 p50 p99 _ < <(measure 'evflow/bench/devices/+/events' "$secs")
stop_bridge
(sleep 0.5; python3 -c "
import sys, time
end = time.time() + $secs - 1
while time.time() < end:
    print('{\"time\":%d,\"events\":[{\"type\":\"EV_REL\",\"code\":\"REL_X\",\"value\":1}]}' % time.clock_gettime_ns(time.CLOCK_MONOTONIC), flush=True)
    time.sleep(1 / max($rate2, 1))" | mosquitto_pub -h 127.0.0.1 -p "$port" -t floor/lat -l) &
read -r nf2 ratef2 fp50 fp99 _ < <(measure 'floor/lat' "$secs")
echo "B2 latency at recorded speed ($rate2 msgs/s, $n2 messages): evflow-mqtt p50 ${p50} µs, p99 ${p99} µs; floor ($ratef2 msgs/s) p50 ${fp50} µs, p99 ${fp99} µs"
