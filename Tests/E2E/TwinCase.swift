import DeviceIO
import InputDevices
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The output ports of the suite's own open devices, by name (set on the loop, read by a case).
final class OutputPorts: Sendable {
    private let ports = Mutex<[String: any DeviceOutputPort]>([:])
    func set(_ name: String, _ port: any DeviceOutputPort) { ports.withLock { $0[name] = port } }
    func port(_ name: String) -> (any DeviceOutputPort)? { ports.withLock { $0[name] } }
}

extension E2E {
    /// The virtual twin against the real kernel (issue #21, docs/virtual-device.md): made
    /// through the live device's `DeviceOutputPort`, it clones the physical device's id, bus,
    /// capabilities and properties under `/devices/virtual/input` with the ` (evflow)` name;
    /// the monitor never takes it as an input; frames written come out of its node whole; while
    /// grabbed, a second reader of the physical node gets nothing; a competing grab is EBUSY;
    /// `releaseAll` writes the releases; destroying leaves no virtual device and ungrabbing
    /// gives the device back.
    static func twin(_ monitor: InputDeviceMonitor, _ loop: InputLoop, _ recorder: Recorder,
                     _ ports: OutputPorts, _ report: Report) {
        let name = "\(prefix) twin\(roundSuffix)"
        let go = "\(scratch)/go-twin"
        unlink(go)
        let helper: Child
        do {
            helper = try Child.device("keyboard", ["--events", "@\(go) KEY_A=1 . KEY_A=0 .", "--hold", "20"], name: name)
        } catch {
            report.check(false, "twin: start the keyboard", "\(error)")
            return
        }
        defer {
            kill(helper.pid, SIGTERM)
            helper.wait()
        }
        guard waitUntil(timeout: 60, { recorder.count("added", name) > 0 && ports.port(name) != nil }),
              let physical = recorder.changes(named: name).first(where: { $0.change.kind == "added" })?.change.device,
              let physicalNode = physical.devnode, let port = ports.port(name) else {
            report.check(false, "twin: keyboard added with an output port", helper.logTail())
            return
        }
        let virtualBefore = countEntries("/sys/devices/virtual/input")
        let created = loop.sync { () -> Result<String, DeviceOutputError> in
            do throws(DeviceOutputError) { return .success(try port.createTwin()) } catch { return .failure(error) }
        }
        guard case .success(let twinNode) = created else {
            report.check(false, "twin: created", "\(created)")
            return
        }
        let physicalSys = "/sys/class/input/\(basename(physicalNode))/device"
        let twinSys = "/sys/class/input/\(basename(twinNode))/device"
        let twinPath = realPath(twinSys) ?? "?"
        report.check(twinPath.hasPrefix("/sys/devices/virtual/input/input")
                     && readFile("\(twinSys)/name")?.trimmingNewline() == physical.name + " (evflow)",
                     "twin: under /devices/virtual/input, named like the device + \" (evflow)\"",
                     "\(twinPath) \(readFile("\(twinSys)/name")?.trimmingNewline() ?? "?")")
        let cloned = ["id/bustype", "id/vendor", "id/product", "id/version", "properties",
                      "capabilities/ev", "capabilities/key", "capabilities/rel", "capabilities/abs",
                      "capabilities/msc", "capabilities/led", "capabilities/snd", "capabilities/sw"]
        let differing = cloned.filter { readFile("\(physicalSys)/\($0)") != readFile("\(twinSys)/\($0)") }
        report.check(differing.isEmpty, "twin: id (bus, vendor, product, version), properties and capabilities cloned",
                     differing.map { "\($0): \(readFile("\(physicalSys)/\($0)")?.trimmingNewline() ?? "-") vs \(readFile("\(twinSys)/\($0)")?.trimmingNewline() ?? "-")" }
                        .joined(separator: "; "))

        // The monitor sees the twin's udev add and must skip it. Not "nothing within a while"
        // (a late add would pass that): once udev is done with the twin (settle), a sentinel
        // device is plugged in; its add reaches the monitor's socket after the twin's, so when
        // the sentinel is announced the twin's add has been handled.
        let sentinelName = "\(prefix) twin sentinel\(roundSuffix)"
        run(["udevadm", "settle", "--timeout=30"])
        let sentinel = try? Child.device("switch", ["--events", "", "--hold", "60"], name: sentinelName)
        let sentinelSeen = waitUntil(timeout: 60) { recorder.count("added", sentinelName) > 0 }
        let seen = recorder.changes(prefix: prefix).filter { $0.change.device.name.hasSuffix(" (evflow)") }
        report.check(sentinelSeen && seen.isEmpty, "twin: the monitor does not take the twin as an input",
                     "sentinel announced after the twin's add: \(sentinelSeen); twins announced: " +
                        seen.map { "\($0.change.kind) \($0.change.device.name)" }.joined(separator: ", "))
        if let sentinel {
            kill(sentinel.pid, SIGTERM)
            sentinel.wait()
        }

        let other = open(physicalNode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        let twinReader = open(twinNode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        defer {
            if other >= 0 { close(other) }
            if twinReader >= 0 { close(twinReader) }
        }
        let grabbed = loop.sync { () -> DeviceOutputError? in
            do throws(DeviceOutputError) { _ = try port.grab(); return nil } catch { return error }
        }
        report.check(grabbed == nil && other >= 0 && twinReader >= 0, "twin: physical device grabbed",
                     "\(grabbed.map(String.init(describing:)) ?? "") fds \(other) \(twinReader)")
        let framesBefore = recorder.log(of: physical).frames.count
        touch(go)
        let read = waitUntil(timeout: 10) { recorder.log(of: physical).frames.count >= framesBefore + 2 }
        usleep(200_000)
        let leaked = readEvents(other)
        report.check(read && leaked.isEmpty, "twin: while grabbed, evflow reads the device and a second reader gets nothing",
                     "evflow read \(recorder.log(of: physical).frames.count - framesBefore) frames; the other reader \(leaked)")

        // Frames written come out of the twin's node whole; releaseAll releases what is held.
        let KEY_B: UInt16 = 48, KEY_C: UInt16 = 46
        let now = monotonicNow()
        let wrote = loop.sync { () -> DeviceOutputError? in
            do throws(DeviceOutputError) {
                try port.write(InputFrame(time: now, events: [InputEvent(time: now, type: EventType.key, code: KEY_B, value: 1)]))
                return nil
            } catch { return error }
        }
        var out: [(UInt16, UInt16, Int32)] = []
        waitUntil(timeout: 2) { out += readEvents(twinReader); return out.count >= 2 }
        report.check(wrote == nil && out.map { "\($0.0):\($0.1)=\($0.2)" } == ["1:48=1", "0:0=0"],
                     "twin: a frame written is read back from the twin, with one SYN_REPORT", "\(out)")
        loop.sync { port.releaseAll() }
        out = []
        waitUntil(timeout: 2) { out += readEvents(twinReader); return out.count >= 2 }
        report.check(out.map { "\($0.0):\($0.1)=\($0.2)" } == ["1:48=0", "0:0=0"], "twin: releaseAll releases the key held, then SYN_REPORT", "\(out)")

        // A competing grab: ours is refused with EBUSY.
        loop.sync { port.ungrab() }
        let grabbedFile = "\(scratch)/twin-competitor"
        unlink(grabbedFile)
        let competitor = try? Child(["python3", "-c",
                                     "import fcntl,os,sys,time; fd=os.open(sys.argv[1],os.O_RDONLY); fcntl.ioctl(fd,0x40044590,1); open(sys.argv[2],'w').close(); time.sleep(30)",
                                     physicalNode, grabbedFile], name: "competitor", log: "\(scratch)/competitor.log")
        if waitUntil(timeout: 10, { access(grabbedFile, F_OK) == 0 }) {
            let busy = loop.sync { () -> DeviceOutputError? in
                do throws(DeviceOutputError) { _ = try port.grab(); return nil } catch { return error }
            }
            report.check(busy?.kind == .busy, "twin: a grab while another program holds one fails with EBUSY", "\(busy.map(String.init(describing:)) ?? "grabbed")")
        } else {
            report.check(false, "twin: competing grabber started", competitor?.logTail() ?? "not started")
        }
        if let competitor {
            kill(competitor.pid, SIGKILL)
            competitor.wait()
        }

        // Destroyed with a key held (destroy releases it first: evdev returns ENODEV to a
        // reader of a destroyed node, so that order is pinned by the hub's unit tests); the
        // twin is then gone and the device given back.
        let later = monotonicNow()
        let held = loop.sync { () -> DeviceOutputError? in
            do throws(DeviceOutputError) {
                _ = try port.grab()
                try port.write(InputFrame(time: later, events: [InputEvent(time: later, type: EventType.key, code: KEY_C, value: 1)]))
                return nil
            } catch { return error }
        }
        out = []
        waitUntil(timeout: 2) { out += readEvents(twinReader); return out.count >= 2 }
        report.check(held == nil && out.map { "\($0.0):\($0.1)=\($0.2)" } == ["1:46=1", "0:0=0"], "twin: grabbed again, a key held on the twin", "\(out)")
        loop.sync {
            port.destroyTwin()
            port.ungrab()
        }
        let gone = waitUntil(timeout: 5) { access(twinNode, F_OK) != 0 && countEntries("/sys/devices/virtual/input") == virtualBefore }
        report.check(gone, "twin: destroyed, no virtual device left", "node exists \(access(twinNode, F_OK) == 0), virtual inputs \(virtualBefore)→\(countEntries("/sys/devices/virtual/input"))")
        let again = open(physicalNode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        var grabProbe: Int32 = 1
        let free = again >= 0 && ioctl(again, UInt(0x40044590), &grabProbe) == 0
        if again >= 0 { close(again) }
        report.check(free, "twin: ungrabbed: the physical device can be grabbed by another program", "errno \(errno)")
        twinOfTheATKeyboard(loop, ports, report)
    }

    /// The twin of the guest's i8042 keyboard, which has what a uinput helper lacks: bus i8042,
    /// `EV_MSC`, `EV_LED`, `EV_REP`. Cloned with the same bus; the kernel's own repeat is off on
    /// the twin (the physical device's repeats are forwarded); a Caps Lock LED the desktop
    /// writes to the twin lights the physical keyboard's LED (the write-back).
    static func twinOfTheATKeyboard(_ loop: InputLoop, _ ports: OutputPorts, _ report: Report) {
        guard let port = ports.port(atKeyboard) else {
            report.check(false, "twin-at: the AT keyboard's output port", "not seen")
            return
        }
        guard let physicalNode = findNode(named: atKeyboard) else {
            report.check(false, "twin-at: the AT keyboard's node", "not found")
            return
        }
        let created = loop.sync { () -> Result<String, DeviceOutputError> in
            do throws(DeviceOutputError) { return .success(try port.createTwin()) } catch { return .failure(error) }
        }
        guard case .success(let twinNode) = created else {
            report.check(false, "twin-at: created", "\(created)")
            return
        }
        defer { loop.sync { port.destroyTwin() } }
        let physicalSys = "/sys/class/input/\(basename(physicalNode))/device"
        let twinSys = "/sys/class/input/\(basename(twinNode))/device"
        let cloned = ["id/bustype", "id/vendor", "id/product", "id/version", "properties",
                      "capabilities/ev", "capabilities/key", "capabilities/msc", "capabilities/led"]
        let differing = cloned.filter { readFile("\(physicalSys)/\($0)") != readFile("\(twinSys)/\($0)") }
        report.check(differing.isEmpty && readFile("\(twinSys)/id/bustype")?.trimmingNewline() == "0011"
                        && (readFile("\(twinSys)/phys") ?? "") == "",
                     "twin-at: the i8042 keyboard cloned with its bus (0011), EV_MSC, EV_LED, EV_REP; phys left empty",
                     "bus \(readFile("\(twinSys)/id/bustype")?.trimmingNewline() ?? "?"); differing: " + differing.map {
                         "\($0): \(readFile("\(physicalSys)/\($0)")?.trimmingNewline() ?? "-") vs \(readFile("\(twinSys)/\($0)")?.trimmingNewline() ?? "-")"
                     }.joined(separator: "; "))

        let twinFD = open(twinNode, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        defer { if twinFD >= 0 { close(twinFD) } }
        var rep: [UInt32] = [0, 0]
        let repRC = ioctl(twinFD, UInt(0x8008_4503), &rep)   // EVIOCGREP
        report.check(twinFD >= 0 && repRC == 0 && rep[1] == 0, "twin-at: the kernel's own autorepeat is off on the twin (REP_PERIOD 0)",
                     "rc \(repRC) delay \(rep[0]) period \(rep[1])")

        // The desktop turns Caps Lock's LED on through the twin: the physical keyboard's goes on.
        let LED_CAPSL: UInt16 = 1
        func capsLockOn() -> Bool {
            let fd = open(physicalNode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var bits: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]
            guard ioctl(fd, UInt(0x8008_4519), &bits) >= 0 else { return false }   // EVIOCGLED(8)
            return bits[0] & (1 << LED_CAPSL) != 0
        }
        let before = capsLockOn()
        writeEvents(twinFD, [(EventType.led, LED_CAPSL, 1), (EventType.syn, 0, 0)])
        let lit = waitUntil(timeout: 5) { capsLockOn() }
        writeEvents(twinFD, [(EventType.led, LED_CAPSL, 0), (EventType.syn, 0, 0)])
        let off = waitUntil(timeout: 5) { !capsLockOn() }
        report.check(!before && lit && off, "twin-at: Caps Lock written to the twin reaches the physical keyboard's LED, on and off",
                     "before \(before), on \(lit), off again \(off)")
    }
}

/// Writes `struct input_event`s (x86_64 layout, time 0: the kernel stamps them).
func writeEvents(_ fd: Int32, _ events: [(UInt16, UInt16, Int32)]) {
    var buffer = [UInt8](repeating: 0, count: 24 * events.count)
    buffer.withUnsafeMutableBytes { raw in
        for (i, e) in events.enumerated() {
            raw.storeBytes(of: e.0, toByteOffset: i * 24 + 16, as: UInt16.self)
            raw.storeBytes(of: e.1, toByteOffset: i * 24 + 18, as: UInt16.self)
            raw.storeBytes(of: e.2, toByteOffset: i * 24 + 20, as: Int32.self)
        }
    }
    _ = buffer.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
}

/// The event node of the input device called `name`, from sysfs.
func findNode(named name: String) -> String? {
    guard let dir = opendir("/sys/class/input") else { return nil }
    defer { closedir(dir) }
    while let e = readdir(dir) {
        let entry = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard entry.hasPrefix("event") else { continue }
        if readFile("/sys/class/input/\(entry)/device/name")?.trimmingNewline() == name { return "/dev/input/\(entry)" }
    }
    return nil
}

/// The `struct input_event`s waiting on a non-blocking fd, as (type, code, value); x86_64
/// layout (24 bytes: a 16-byte timeval, then type, code, value).
func readEvents(_ fd: Int32) -> [(UInt16, UInt16, Int32)] {
    var out: [(UInt16, UInt16, Int32)] = []
    var buffer = [UInt8](repeating: 0, count: 24 * 64)
    while true {
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return out }
        for offset in stride(from: 0, to: n - n % 24, by: 24) {
            buffer.withUnsafeBytes { raw in
                out.append((raw.loadUnaligned(fromByteOffset: offset + 16, as: UInt16.self),
                            raw.loadUnaligned(fromByteOffset: offset + 18, as: UInt16.self),
                            raw.loadUnaligned(fromByteOffset: offset + 20, as: Int32.self)))
            }
        }
    }
}

/// Entries of a directory (not `.`/`..`); -1 when it cannot be read.
func countEntries(_ path: String) -> Int {
    guard let dir = opendir(path) else { return -1 }
    defer { closedir(dir) }
    var n = 0
    while let e = readdir(dir) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { n += 1 }
    }
    return n
}

func realPath(_ path: String) -> String? {
    guard let p = realpath(path, nil) else { return nil }
    defer { free(p) }
    return String(cString: p)
}

func basename(_ path: String) -> String {
    String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
}
