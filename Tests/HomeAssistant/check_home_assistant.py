"""A real Home Assistant reads evflow's devices through evflow-mqtt (issue #31, item 4).

Run by scripts/check-home-assistant with the Python of a virtual environment where Home
Assistant core is installed from PyPI (aiohttp comes with it). Everything runs on 127.0.0.1 on
free ports, in a temporary directory:

  mosquitto ◄── evflow-mqtt --ha-discovery ◄── evflowd --replay (a macro pad, a lid switch)
      ▲
      └── Home Assistant (onboarded through its API, its MQTT integration added through the
          same config flow a person clicks through)

and asks Home Assistant's own REST and websocket APIs what it made of the discovery documents:
its device registry, entity registry, states and device triggers. The recordings' timings
(docs in their headers) are what the checks wait for.
"""

import argparse
import asyncio
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import aiohttp

HOST = "checkhost"
PAD = "Tests/Fixtures/handmade/ha-macro-pad.evemu"
LID = "Tests/Fixtures/handmade/lid-switch-slow.evemu"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Failure(Exception):
    pass


class Run:
    """The processes of one check and their logs; everything is stopped at the end."""

    def __init__(self, keep):
        self.dir = tempfile.mkdtemp(prefix="evflow-ha-check.")
        self.keep = keep
        self.procs = []

    def start(self, name, argv, **kw):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **kw)
        self.procs.append((name, p))
        return p

    def logs(self, lines=30):
        for name in sorted(os.listdir(self.dir)):
            path = os.path.join(self.dir, name)
            if name.endswith(".log") and os.path.getsize(path) > 0:
                print(f"--- {name} (last {lines} lines)", file=sys.stderr)
                with open(path, errors="replace") as f:
                    for line in f.readlines()[-lines:]:
                        print("  | " + line.rstrip()[:300], file=sys.stderr)

    def stop(self):
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for _, p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.keep:
            print(f"check-home-assistant: kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class HomeAssistant:
    """A client of one Home Assistant instance: REST with a bearer token, and one websocket."""

    def __init__(self, url, session):
        self.url, self.session = url, session
        self.token = None
        self.ws = None
        self.next_id = 0

    async def onboard(self):
        """Creates the owner user (the first onboarding step) and logs in as it."""
        client = self.url + "/"
        r = await self.session.post(f"{self.url}/api/onboarding/users", json={
            "client_id": client, "name": "evflow check", "username": "evflow",
            "password": "evflow-check", "language": "en"})
        if r.status != 200:
            raise Failure(f"onboarding: HTTP {r.status}: {await r.text()}")
        code = (await r.json())["auth_code"]
        r = await self.session.post(f"{self.url}/auth/token", data={
            "grant_type": "authorization_code", "code": code, "client_id": client})
        self.token = (await r.json())["access_token"]
        self.ws = await self.session.ws_connect(self.url + "/api/websocket")
        await self.ws.receive_json()
        await self.ws.send_json({"type": "auth", "access_token": self.token})
        reply = await self.ws.receive_json()
        if reply.get("type") != "auth_ok":
            raise Failure(f"websocket login: {reply}")
        return reply["ha_version"]

    async def rest(self, method, path, body=None):
        r = await self.session.request(method, self.url + path, json=body,
                                       headers={"Authorization": "Bearer " + self.token})
        text = await r.text()
        if r.status >= 300:
            raise Failure(f"{method} {path}: HTTP {r.status}: {text}")
        return json.loads(text) if text else None

    async def call(self, message):
        self.next_id += 1
        message = dict(message, id=self.next_id)
        await self.ws.send_json(message)
        while True:
            reply = await self.ws.receive_json()
            if reply.get("id") == self.next_id:
                if not reply.get("success", False):
                    raise Failure(f"websocket {message['type']}: {reply}")
                return reply["result"]

    async def add_mqtt(self, port):
        """The MQTT integration's config flow, as the UI drives it: one form, broker and port."""
        flow = await self.rest("POST", "/api/config/config_entries/flow",
                               {"handler": "mqtt", "show_advanced_options": False})
        if flow.get("step_id") != "broker":
            raise Failure(f"MQTT config flow: unexpected first step {flow}")
        done = await self.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                               {"broker": "127.0.0.1", "port": port})
        if done.get("type") != "create_entry" or done["result"]["state"] != "loaded":
            raise Failure(f"MQTT config flow did not end in a loaded entry: {done}")

    async def evflow_devices(self):
        """Device registry entries made from evflow-mqtt's discovery, by their evflow identifier."""
        devices = await self.call({"type": "config/device_registry/list"})
        return {i[1]: d for d in devices for i in d["identifiers"]
                if i[0] == "mqtt" and i[1].startswith(f"evflow_{HOST}_")}

    async def entities_of(self, device_id):
        entities = await self.call({"type": "config/entity_registry/list"})
        return {e["entity_id"]: e for e in entities if e["device_id"] == device_id}

    async def state(self, entity_id):
        return (await self.rest("GET", f"/api/states/{entity_id}"))["state"]


async def wait_for(what, probe, timeout):
    """Polls `probe` (async, returns a value or None) until it gives a value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = await probe()
            if value is not None:
                return value
        except Failure as e:
            last = e
        await asyncio.sleep(0.5)
    raise Failure(f"{what}: not within {timeout} s" + (f" (last error: {last})" if last else ""))


def ok(message):
    print("ok   " + message, flush=True)


async def check(args, run):
    mqtt_port, ha_port = free_port(), free_port()
    with open(os.path.join(run.dir, "mosquitto.conf"), "w") as f:
        # (as root mosquitto would switch to user mosquitto, who cannot read this temp dir)
        f.write(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous true\nuser {pwd.getpwuid(os.getuid()).pw_name}\n")
    run.start("mosquitto", ["mosquitto", "-c", os.path.join(run.dir, "mosquitto.conf")])

    config = os.path.join(run.dir, "ha")
    os.makedirs(config)
    with open(os.path.join(config, "configuration.yaml"), "w") as f:
        # The least that onboarding, the MQTT integration, automations and a counter need;
        # no `default_config` (dozens of integrations this check does not use).
        f.write(f"""homeassistant:
  name: evflow check
  latitude: 0
  longitude: 0
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: DE
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {ha_port}
api:
config:
onboarding:
automation: !include automations.yaml
counter:
  evflow_double:
    initial: 0
""")
    with open(os.path.join(config, "automations.yaml"), "w") as f:
        f.write("[]\n")
    started = time.monotonic()
    run.start("home-assistant", [args.hass, "--config", config, "--log-file", os.path.join(run.dir, "ha-core.log")])
    url = f"http://127.0.0.1:{ha_port}"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        ha = HomeAssistant(url, session)

        async def onboarding_open():
            try:
                r = await session.get(url + "/api/onboarding")
                return (await r.json()) if r.status == 200 else None
            except aiohttp.ClientError:
                return None
        steps = await wait_for("Home Assistant's HTTP API", onboarding_open, args.start_timeout)
        if steps[0] != {"step": "user", "done": False}:
            raise Failure(f"a fresh Home Assistant should ask for its user first: {steps}")
        version = await ha.onboard()
        await ha.add_mqtt(mqtt_port)
        ok(f"Home Assistant {version} up in {time.monotonic() - started:.0f} s, onboarded, MQTT integration added (broker 127.0.0.1:{mqtt_port})")

        evflow_config = os.path.join(run.dir, "evflow.yaml")
        with open(evflow_config, "w") as f:
            # Gestures for the pads' buttons (a device of buttons only is not classed a keypad
            # in a replay, so a rule turns them on, as a user's would).
            f.write('version: 1\ndevices:\n  - match: { name: "Test Macro Pad" }\n    gestures: on\n')
        sock = os.path.join(run.dir, "evflowd.sock")
        t0 = time.monotonic()
        run.start("evflowd", [os.path.join(args.bin, "evflowd"), "--replay", PAD, PAD, LID, "--loop",
                                  "--config", evflow_config, "--socket", sock])
        async def listening():
            return True if os.path.exists(sock) else None
        await wait_for("evflowd's socket", listening, 20)
        run.start("evflow-mqtt", [os.path.join(args.bin, "evflow-mqtt"), "--socket", sock,
                                  "--broker", "127.0.0.1", "--port", str(mqtt_port), "--hostname", HOST,
                                  "--ha-discovery", "--ha-key", "BTN_0"])

        async def all_devices():
            devices = await ha.evflow_devices()
            return devices if len(devices) == 3 else None
        devices = await wait_for("evflow's three devices in Home Assistant's device registry", all_devices, 30)
        seen_after = time.monotonic() - t0
        pads = sorted((d for d in devices.values() if d["name"] == f"Test Macro Pad ({HOST})"), key=lambda d: d["id"])
        lids = [d for d in devices.values() if d["name"] == f"Test Lid Switch ({HOST})"]
        if len(pads) != 2 or len(lids) != 1:
            raise Failure(f"device names: {sorted(d['name'] for d in devices.values())}")
        pad, lid = pads[0], lids[0]
        for d, model in ((pads[0], "1209:0001 Test Macro Pad"), (pads[1], "1209:0001 Test Macro Pad"), (lid, "0000:0005 Test Lid Switch")):
            if d["manufacturer"] != "evflow" or d["model"] != model:
                raise Failure(f"device {d['name']}: manufacturer {d['manufacturer']!r}, model {d['model']!r}")
        ok(f"device registry: two identical macro pads as two devices ({', '.join(sorted(i for i, d in devices.items() if d in pads))}) "
           f"and the lid, manufacturer evflow, {seen_after:.1f} s after evflowd started")

        pad_entities, lid_entities = await ha.entities_of(pad["id"]), await ha.entities_of(lid["id"])
        button = [e for e in pad_entities if e.startswith("binary_sensor.") and e.endswith("_btn_0")]
        lid_sensor = [e for e in lid_entities if e.startswith("binary_sensor.") and e.endswith("_sw_lid")]
        counters = sorted(e.rsplit("_", 2)[-2] + "_" + e.rsplit("_", 2)[-1] for e in pad_entities if e.startswith("sensor."))
        if len(button) != 1 or len(lid_sensor) != 1:
            raise Failure(f"entities: pad {sorted(pad_entities)}, lid {sorted(lid_entities)}")
        ok(f"entity registry: {button[0]} (--ha-key BTN_0), {lid_sensor[0]}, the pad's counter sensors {counters}")

        # Device triggers, one per button and gesture, listed before any press (the pads' first
        # press is at 15 s), and the pad's event entity.
        async def pad_triggers():
            listed = await ha.call({"type": "device_automation/trigger/list", "device_id": pad["id"]})
            mqtt = [t for t in listed if t.get("domain") == "mqtt"]
            return mqtt if len(mqtt) == 4 * 7 else None
        triggers = await wait_for("28 MQTT device triggers (4 buttons × 7 gestures) of the first pad", pad_triggers, 15)
        listed_at = time.monotonic() - t0
        if listed_at >= 15.0:
            raise Failure(f"the triggers were listed {listed_at:.1f} s after evflowd started: after the first press")
        pairs = sorted({(t["subtype"], t["type"]) for t in triggers})
        expected_types = {"button_press", "button_release", "button_short_press", "button_double_press",
                          "button_triple_press", "button_long_press", "button_hold"}
        if {sub for sub, _ in pairs} != {"BTN_0", "BTN_1", "BTN_2", "BTN_3"} or {ty for _, ty in pairs} != expected_types:
            raise Failure(f"trigger subtypes and types: {pairs}")
        events = [e for e in pad_entities if e.startswith("event.")]
        if len(events) != 1:
            raise Failure(f"one event entity for the pad's gestures, got {events}")
        ok(f"device triggers: {len(triggers)} (BTN_0..BTN_3 × {len(expected_types)} types) listed {listed_at:.1f} s after "
           f"evflowd started, before any press; event entity {events[0]}")

        # An automation on the first pad's BTN_0 double press that counts, written through
        # Home Assistant's own config API (which reloads automations).
        double = next(t for t in triggers if t["subtype"] == "BTN_0" and t["type"] == "button_double_press")
        await ha.rest("POST", "/api/config/automation/config/evflow_double", {
            "alias": "evflow BTN_0 double", "mode": "queued",
            "triggers": [{k: v for k, v in double.items() if k != "metadata"}],
            "actions": [{"action": "counter.increment", "target": {"entity_id": "counter.evflow_double"}}]})
        async def automation_on():
            states = await ha.rest("GET", "/api/states")
            autos = [x for x in states if x["entity_id"].startswith("automation.")]
            return autos if autos and autos[0]["state"] == "on" else None
        autos = await wait_for("the automation loaded", automation_on, 20)
        if await ha.state("counter.evflow_double") != "0":
            raise Failure("the counter moved before any press")
        ok(f"{autos[0]['entity_id']}: on, triggered by the first pad's BTN_0 button_double_press; counter at 0")

        # The lid recording: closed at 0.1 s, opened at 6 s, closed at 12 s. An `opening`
        # binary sensor is on when open; Home Assistant evaluates the discovery's value template.
        async def lid_state(expected, after, until):
            await asyncio.sleep(max(0.0, t0 + after - time.monotonic()))
            while True:
                state, at = await ha.state(lid_sensor[0]), time.monotonic() - t0
                if state == expected:
                    return at
                if at > until:
                    raise Failure(f"{lid_sensor[0]} at {at:.1f} s: {state}, expected {expected}")
                await asyncio.sleep(0.2)
        if seen_after > 4.0:
            raise Failure(f"discovery took {seen_after:.1f} s: too late to see the lid closed (0.1 s – 6 s)")
        closed_at = await lid_state("off", 0.5, 5.5)
        opened_at = await lid_state("on", 6.0, 11.5)
        closed_again_at = await lid_state("off", 12.0, 19.5)
        ok(f"{lid_sensor[0]}: off at {closed_at:.1f} s, on at {opened_at:.1f} s, off at {closed_again_at:.1f} s "
           "(the recording's lid closes at 0.1 s, opens at 6 s, closes at 12 s)")

        # The pads' BTN_0 double press at 15.0–15.33 s (both pads: only the first's trigger is in
        # the automation), final when the 300 ms window after 15.33 s passed; BTN_1 at 20 s.
        await asyncio.sleep(max(0.0, t0 + 17.0 - time.monotonic()))
        counted = await ha.state("counter.evflow_double")
        event_state = await ha.rest("GET", f"/api/states/{events[0]}")
        if counted != "1":
            raise Failure(f"counter.evflow_double after the double press: {counted}, expected 1")
        if event_state["attributes"].get("event_type") != "BTN_0_double":
            raise Failure(f"{events[0]} after the double press: {event_state}")
        ok(f"the recorded double press ran the automation once (counter 1); {events[0]}: event_type BTN_0_double")

        # A looping replay removes every device at the end of a pass and adds it again, as a
        # Bluetooth device that sleeps and wakes: the bridge clears the device's discovery
        # topics, then publishes them again. Home Assistant must see the same devices again.
        before = {i: d["id"] for i, d in devices.items()}
        async def lid_entity_gone():
            return True if lid_sensor[0] not in await ha.entities_of(lid["id"]) else None
        await wait_for("the lid's entity removed at the end of the replay's pass (20.1 s)", lid_entity_gone, 40)
        async def back():
            now = await ha.evflow_devices()
            if len(now) != 3:
                return None
            lid_now = next(d for d in now.values() if d["name"] == lid["name"])
            return now if lid_sensor[0] in await ha.entities_of(lid_now["id"]) else None
        again = await wait_for("the devices back after the replay's loop", back, 40)
        after = {i: d["id"] for i, d in again.items()}
        if after != before:
            raise Failure(f"device registry ids changed across a removal and re-add: {before} → {after}")
        ok("after the replay's loop removed and re-added every device: the same three device registry entries")

        # The second pass's double press (15.33 s into it) reaches the same automation through
        # the re-published trigger: once more, and no single or other press counts.
        second_pass = time.monotonic()
        async def counted_twice():
            value = await ha.state("counter.evflow_double")
            if value not in ("1", "2"):
                raise Failure(f"counter.evflow_double in the second pass: {value}")
            return value if value == "2" else None
        await wait_for("the second pass's double press counted", counted_twice, 30)
        await asyncio.sleep(2.0)
        if await ha.state("counter.evflow_double") != "2":
            raise Failure("the counter moved again after the second double press")
        ok(f"the second pass's double press counted once more ({time.monotonic() - second_pass:.0f} s after the devices came back): counter 2")

        # Home Assistant logs a template it cannot render (an entity reading a payload that is
        # not the document its discovery config promised, e.g. a cleared state topic).
        with open(os.path.join(run.dir, "ha-core.log"), errors="replace") as f:
            errors = [l.strip() for l in f if "[homeassistant.helpers.template]" in l or "[homeassistant.components.mqtt" in l and " ERROR " in l]
        if errors:
            raise Failure(f"{len(errors)} template or MQTT errors in Home Assistant's log, first: {errors[0][:300]}")
        ok("Home Assistant's log: no template or MQTT error (every payload matched its entity's template)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="directory of evflowd and evflow-mqtt")
    parser.add_argument("--hass", required=True, help="the hass executable")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds Home Assistant may take to start")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, HA's config)")
    args = parser.parse_args()
    run = Run(args.keep)
    try:
        asyncio.run(check(args, run))
    except Failure as e:
        print(f"check-home-assistant: FAIL: {e}", file=sys.stderr)
        run.logs()
        run.stop()
        sys.exit(1)
    run.stop()
    print("check-home-assistant: all checks passed")


if __name__ == "__main__":
    main()
