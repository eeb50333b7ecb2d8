import Dispatch
import DeviceIO
import InputDevices
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// evflow's real-kernel suite: uinput devices, evdev, udev, inside the scripts/vm guest.
/// Run by `scripts/e2e [CASE]...` (docs/e2e.md); with no arguments every case runs.
@main
struct E2E {
    static let prefix = "evflow e2e"
    /// The guest's own keyboard (QEMU's i8042): real LEDs, autorepeat and scan codes.
    static let atKeyboard = "AT Translated Set 2 keyboard"
    /// Add/remove cycles of the leak case (`scripts/e2e cycles=N` to change).
    nonisolated(unsafe) static var cycleCount = 200
    /// How many times each selected case runs (`repeat=N`, for hunting intermittent failures).
    nonisolated(unsafe) static var repetitions = 1
    /// Appended to device names in rounds after the first, so every round's devices are new.
    nonisolated(unsafe) static var roundSuffix = ""

    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        installCrashReporter()
        let selected = Set(arguments.filter { !$0.contains("=") })
        for option in arguments where option.contains("=") {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            if parts[0] == "cycles", let n = Int(parts[1]) { cycleCount = n }
            if parts[0] == "repeat", let n = Int(parts[1]) { repetitions = max(n, 1) }
        }
        let report = Report()
        let suiteStart = monotonicNow()
        mkdir(scratch, 0o777)
        chmod(scratch, 0o777)   // the permissions case writes here as "nobody"
        guard getuid() == 0, access("/dev/uinput", W_OK) == 0 else {
            say("FAIL setup: needs root and /dev/uinput (run through scripts/e2e)")
            say("0 passed, 1 failed")
            exit(1)
        }

        // The input loop opens its epoll, eventfd and timerfd at once, and the first getpwnam
        // may load NSS modules: both before the fd baselines, which measure the monitor only.
        let loop: InputLoop
        do {
            loop = try InputLoop(name: "evflow.e2e")
        } catch {
            say("FAIL setup: input loop: \(error)")
            say("0 passed, 1 failed")
            exit(1)
        }
        warmUp(loop)
        let fdsBeforeMonitor = openFileDescriptorCount() ?? -1
        say("fds before the monitor: \(openFileDescriptorTargets())")
        let monitor = InputDeviceMonitor(loop: loop)
        // After the monitor is made: what it owns for its whole life (the subject of power-supply
        // changes, docs/batteries.md) stays while it does; the check is about what subscribing
        // to its devices builds.
        let liveBeforeMonitor = LiveResources.count
        let recorder = Recorder()
        let frameSubscriptions = CounterBox()
        let ports = OutputPorts()
        // Every device's stream is followed to its end (recorded as `removed`); the suite's own
        // devices also get a frame log. Frames are subscribed in the handler: nothing is missed.
        var subscription: Disposable? = monitor.devices.subscribe(onNext: { stream in
            let info = stream.info
            recorder.record(stream.announcement)
            var log: Int?
            if case .open = stream.access, info.name.hasPrefix(prefix) {
                frameSubscriptions.value += 1
                log = recorder.startLog(info)
            }
            // Only the twin case's devices: a port keeps its device's handle alive.
            if case .open = stream.access, info.name.hasPrefix("\(prefix) twin") || info.name == atKeyboard,
               let port = stream.output {
                ports.set(info.name, port)
            }
            _ = stream.frames.subscribe(
                onNext: { frame in if let log { recorder.frame(frame, log: log) } },
                onCompleted: {
                    if let log { recorder.completed(log: log) }
                    recorder.record(.removed(info))
                })
        }, onError: { error in
            say("monitor error: \(error)")
        })

        // The guest's own keyboard shows that start-up enumeration works and takes udev's classes.
        let enumerated = waitUntil(timeout: 20) {
            recorder.changes.contains { $0.change.device.name == "AT Translated Set 2 keyboard" }
        }
        if selected.isEmpty || selected.contains("enumerate") {
            let at = recorder.changes.first { $0.change.device.name == "AT Translated Set 2 keyboard" }?.change
            report.check(enumerated && at?.kind == "added" && at!.device.classes.contains(.keyboard),
                         "enumerate: present device reported at start with its udev class",
                         "\(at.map { "\($0.kind) \($0.device.devnode ?? "") \($0.device.classes.map(\.rawValue).sorted())" } ?? "not seen")")
        }

        let cases: [(String, () -> Void)] = [
            ("classes", { classesAndEvents(monitor, recorder, report) }),
            ("cycles", { cycles(monitor, recorder, report, frameSubscriptions) }),
            ("vanish", { vanishMidRead(monitor, recorder, report) }),
            ("permissions", { permissions(monitor, recorder, report) }),
            ("overflow", { overflow(report) }),
            ("twin", { twin(monitor, loop, recorder, ports, report) }),
        ]
        for round in 1...repetitions {
        if repetitions > 1 { say("=== round \(round) of \(repetitions)") }
        roundSuffix = round > 1 ? " r\(round)" : ""
        for (name, body) in cases where selected.isEmpty || selected.contains(name) {
            let start = monotonicNow()
            say("--- \(name)")
            body()
            say("--- \(name) took \(seconds(since: start))")
        }
        }

        // Stopping the monitor disposes every scope and closes every fd it opened.
        subscription?.dispose()
        subscription = nil   // the subscription object itself is a live resource until released
        waitUntil(timeout: 5) {
            monitor.scopeCount == 0 && openFileDescriptorCount() == fdsBeforeMonitor
                && LiveResources.count == liveBeforeMonitor
        }
        let fds = openFileDescriptorCount() ?? -1
        report.check(monitor.scopeCount == 0 && fds == fdsBeforeMonitor && LiveResources.count == liveBeforeMonitor,
                     "shutdown: disposing the devices subscription releases everything",
                     "scopes \(monitor.scopeCount), fds \(fdsBeforeMonitor)→\(fds), live resources \(liveBeforeMonitor)→\(LiveResources.count)")
        let s = monitor.statistics
        say("statistics: synDropped \(s.synDropped), removedOnENODEV \(s.removedOnENODEV), removedOnUdevRemove \(s.removedOnUdevRemove), removedOnReadError \(s.removedOnReadError), openRetries \(s.openRetries), inaccessible \(s.inaccessible)")
        say("suite took \(seconds(since: suiteStart))")
        say("\(report.passed) passed, \(report.failed) failed")
        exit(report.failed == 0 ? 0 : 1)
    }

    // MARK: Cases

    /// Keyboard, mouse and switch appear with udev's classes; their events arrive in order,
    /// framed, with CLOCK_MONOTONIC kernel timestamps; their removal is seen and ends the frames.
    static func classesAndEvents(_ monitor: InputDeviceMonitor, _ recorder: Recorder, _ report: Report) {
        struct Spec {
            let kind: String
            let classes: Set<DeviceClass>
            let script: String
            let expected: String
        }
        let specs = [
            Spec(kind: "keyboard", classes: [.keyboard, .key], script: "KEY_H=1 . KEY_H=0 . +10ms KEY_I=1 . KEY_I=0 .",
                 expected: "KEY_H=1 . KEY_H=0 . KEY_I=1 . KEY_I=0"),
            Spec(kind: "mouse", classes: [.mouse], script: "REL_X=5 REL_Y=-3 . +10ms BTN_LEFT=1 . BTN_LEFT=0 . +10ms REL_WHEEL=1 .",
                 expected: "REL_X=5 REL_Y=-3 . BTN_LEFT=1 . BTN_LEFT=0 . REL_WHEEL=1"),
            Spec(kind: "switch", classes: [.switch], script: "SW_LID=1 . +50ms SW_LID=0 .",
                 expected: "SW_LID=1 . SW_LID=0"),
        ]
        let go = "\(scratch)/go-classes"
        unlink(go)
        var children: [(Spec, String, Child)] = []
        for spec in specs {
            let name = "\(prefix) \(spec.kind)\(roundSuffix)"
            do {
                children.append((spec, name, try Child.device(spec.kind, ["--events", "@\(go) \(spec.script)", "--hold", "0.3"], name: name)))
            } catch {
                report.check(false, "classes: start \(spec.kind)", "\(error)")
            }
        }
        let allAdded = waitUntil(timeout: 60) {
            children.allSatisfy { c in recorder.count("added", c.1) > 0 }
        }
        for (spec, name, child) in children {
            let added = recorder.changes(named: name).first { $0.change.kind == "added" }?.change.device
            report.check(added != nil && spec.classes.isSubset(of: added!.classes),
                         "classes: \(spec.kind) added with \(spec.classes.map { $0.udevProperty }.sorted())",
                         added.map { "\($0.devnode ?? "") classes \($0.classes.map(\.rawValue).sorted()) id \($0.id)" }
                            ?? "not added; helper: \(child.logTail())")
        }
        guard allAdded else {
            touch(go)
            for c in children { c.2.wait() }
            return
        }
        let before = monotonicNow()
        touch(go)
        for c in children { c.2.wait() }
        waitUntil(timeout: 30) {
            children.allSatisfy { c in recorder.count("removed", c.1) > 0 }
        }
        for (spec, name, _) in children {
            guard let info = recorder.changes(named: name).first(where: { $0.change.kind == "added" })?.change.device else { continue }
            waitUntil(timeout: 5) { recorder.log(of: info).completed }
            let log = recorder.log(of: info)
            report.check(describe(log.frames) == spec.expected, "events: \(spec.kind) frames in order with their values",
                         describe(log.frames))
            let times = log.frames.flatMap { f in f.events.map(\.time) + [f.time] }
            let ordered = zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }
            let inWindow = zip(log.frames, log.receivedAt).allSatisfy { f, got in f.time >= before && f.time <= got }
            let spread = (log.frames.last?.time ?? 0) - (log.frames.first?.time ?? 0)
            report.check(!log.frames.isEmpty && ordered && inWindow,
                         "time: \(spec.kind) timestamps are CLOCK_MONOTONIC, non-decreasing, between injection and receipt",
                         "first frame \(((log.frames.first?.time ?? 0) - before) / 1000) µs after the go signal, spread \(spread / 1000) µs")
            let removals = recorder.changes(named: name).filter { $0.change.kind == "removed" }.count
            report.check(removals == 1 && log.completed, "removal: \(spec.kind) removed once, frames completed",
                         "removed \(removals)×, completed \(log.completed)")
        }
    }

    /// 200 add/remove cycles of one lid switch: every cycle is announced and removed once, and
    /// afterwards no fd, scope or subscription is left over.
    static func cycles(_ monitor: InputDeviceMonitor, _ recorder: Recorder, _ report: Report, _ frameSubscriptions: CounterBox) {
        let count = cycleCount
        let name = "\(prefix) cycle\(roundSuffix)"
        // Let the previous case's teardown finish (cancel handlers close fds on the queue).
        waitUntil(timeout: 5) { monitor.scopeCount == 1 }
        let fds0 = openFileDescriptorCount() ?? -1
        let scopes0 = monitor.scopeCount
        let live0 = LiveResources.count
        let subs0 = frameSubscriptions.value
        say("baseline: fds \(fds0), scopes \(scopes0), live resources \(live0)")
        let start = monotonicNow()
        // A lid switch: one capability bit, so the helper and udev spend little per cycle.
        guard let child = try? Child.device("switch", ["--cycles", "\(count)", "--hold", "0.1", "--events", "SW_LID=1 . SW_LID=0 ."],
                                            name: name) else {
            report.check(false, "cycles: start helper")
            return
        }
        var maxScopes = 0
        var maxFds = 0
        var polls = 0
        var lastRemoved = -1
        let done = waitUntil(timeout: 400) {
            polls += 1
            if polls % 500 == 0 {   // about every 10 s: show progress on a slow host
                let removed = recorder.count("removed", name)
                say("cycles: \(removed) removed after \(seconds(since: start))")
                if removed == lastRemoved {   // stalled: show what everyone is waiting for
                    say("  diag: udev \(monitor.diagnosticUdev)")
                    diagnose(loop: monitor.diagnosticLoop, child: child)
                }
                lastRemoved = removed
            }
            maxScopes = max(maxScopes, monitor.scopeCount)
            if polls % 5 == 0 { maxFds = max(maxFds, openFileDescriptorCount() ?? 0) }
            return recorder.count("removed", name) >= count
        }
        let status = child.wait()
        let settled = waitUntil(timeout: 10) {
            openFileDescriptorCount() == fds0 && monitor.scopeCount == scopes0 && LiveResources.count == live0
        }
        let changes = recorder.changes(named: name)
        let added = changes.filter { $0.change.kind == "added" }.count
        let inaccessible = changes.filter { $0.change.kind == "inaccessible" }.count
        let removed = changes.filter { $0.change.kind == "removed" }.count
        let completed = recorder.logs(prefix: name).filter(\.completed).count
        say("cycles: \(count) in \(seconds(since: start)); added \(added), inaccessible \(inaccessible), removed \(removed); peak scopes \(maxScopes), peak fds \(maxFds)")
        // Per cycle: one announcement (added, or inaccessible when the node was already gone by
        // the time udev finished with it), then one removal.
        let kinds = changes.map(\.change.kind)
        let paired = kinds.count == 2 * count && stride(from: 0, to: kinds.count, by: 2).allSatisfy {
            kinds[$0] != "removed" && kinds[$0 + 1] == "removed"
        }
        report.check(done && status == 0 && added + inaccessible == count && removed == count && paired && added > 0,
                     "cycles: \(count) add/remove cycles each announced once and removed once",
                     "helper exit \(status), added \(added), inaccessible \(inaccessible) (gone before udev finished), removed \(removed)")
        report.check(frameSubscriptions.value - subs0 == added && completed == added,
                     "cycles: every device stream's frames completed on removal", "\(completed)/\(added)")
        let fds = openFileDescriptorCount() ?? -1
        report.check(settled, "leaks: after \(count) cycles fds, scopes and live resources are back to baseline",
                     "fds \(fds0)→\(fds), scopes \(scopes0)→\(monitor.scopeCount), live resources \(live0)→\(LiveResources.count)")
    }

    /// uevents lost in a hot-plug storm (the udev socket overflows: ENOBUFS) are caught up by
    /// re-enumerating. A second monitor, with the smallest receive buffer the kernel allows,
    /// has its input thread held while a switch comes and goes 20 times and then a keyboard
    /// appears and stays; once the thread runs again, the overflow is counted and the
    /// monitor's devices are the kernel's: the keyboard present, no switch left over.
    static func overflow(_ report: Report) {
        let name = "\(prefix) overflow\(roundSuffix)"
        let loop: InputLoop
        do {
            loop = try InputLoop(name: "e2e.overflow")
        } catch {
            report.check(false, "overflow: input loop", "\(error)")
            return
        }
        let monitor = InputDeviceMonitor(loop: loop, options: .init(udevReceiveBuffer: 1))
        // Devices of this case announced and not yet ended, by name; touched on the loop only.
        final class Present: @unchecked Sendable { var count: [String: Int] = [:] }
        let present = Present()
        let subscription = monitor.devices.subscribe(onNext: { stream in
            let device = stream.info.name
            guard device.hasPrefix(name) else {
                _ = stream.frames.subscribe()
                return
            }
            present.count[device, default: 0] += 1
            _ = stream.frames.subscribe(onCompleted: { present.count[device, default: 0] -= 1 })
        })
        loop.sync {}   // enumerated
        let hold = DispatchSemaphore(value: 0)
        loop.schedule { hold.wait() }   // the input thread is busy: uevents pile up in the socket
        let churn = try? Child.device("switch", ["--cycles", "20", "--hold", "0.05", "--events", "SW_LID=1 ."],
                                      name: "\(name) churn")
        let churnStatus = churn?.wait() ?? -1
        // The keyboard's uevents come after the churn's have filled the socket: without the
        // re-enumeration it would never be seen. Its node must exist, and udev be done with
        // it, before the thread runs again.
        let nodeFile = "\(scratch)/overflow.node"
        unlink(nodeFile)
        let stays = try? Child.device("keyboard", ["--hold", "30", "--node-file", nodeFile], name: "\(name) stays")
        let created = waitUntil(timeout: 30) { access(nodeFile, F_OK) == 0 }
        run(["udevadm", "settle", "--timeout=10"])
        hold.signal()
        let caughtUp = waitUntil(timeout: 20) {
            loop.sync { present.count["\(name) stays"] == 1 && present.count["\(name) churn", default: 0] == 0 }
        }
        let overflows = monitor.statistics.udevOverflows
        let seen = loop.sync { present.count.map { "\($0.key.dropFirst(name.count + 1)) \($0.value)" }.sorted() }
        report.check(churnStatus == 0 && stays != nil && created && overflows >= 1 && caughtUp,
                     "overflow: uevents lost while the input thread was busy are caught up by re-enumeration",
                     "helper exit \(churnStatus), udev overflows \(overflows), present \(seen)")
        if let stays {
            kill(stays.pid, SIGTERM)
            stays.wait()
        }
        subscription.dispose()
        loop.sync {}
        loop.shutdown()
        waitUntil(timeout: 5) { loop.hasFinished }
    }

    /// A device destroyed while it is being read: the read says ENODEV before udev's `remove`
    /// arrives; the device is removed once, its frames complete, nothing leaks.
    static func vanishMidRead(_ monitor: InputDeviceMonitor, _ recorder: Recorder, _ report: Report) {
        let name = "\(prefix) vanish\(roundSuffix)"
        waitUntil(timeout: 5) { monitor.scopeCount == 1 }
        let fds0 = openFileDescriptorCount() ?? -1
        let scopes0 = monitor.scopeCount
        let live0 = LiveResources.count
        let before = monitor.statistics
        let nodeFile = "\(scratch)/vanish.node"
        unlink(nodeFile)
        // Streams key events without pause and destroys the device 4 s after creating it,
        // in the middle of a frame: time enough for udev and the monitor to open it.
        guard let child = try? Child.device("keyboard", ["--events", "KEY_A=1 KEY_B=1 . KEY_A=0 KEY_B=0 .",
                                                         "--destroy-after", "4", "--node-file", nodeFile], name: name) else {
            report.check(false, "vanish: start helper")
            return
        }
        let removed = waitUntil(timeout: 60) { recorder.count("removed", name) > 0 }
        let status = child.wait()
        // Let udev deliver its own `remove` too, then look again: still one removal. Not after
        // a grace period (which a late message would outlast): once udev is done (settle), a
        // sentinel device is plugged in, whose `add` reaches the monitor's socket after that
        // `remove`; when the sentinel is announced, the `remove` has been handled. The
        // sentinel then goes too, before the leak check.
        run(["udevadm", "settle", "--timeout=10"])
        let sentinelName = "\(prefix) vanish sentinel\(roundSuffix)"
        let sentinel = try? Child.device("switch", ["--events", "", "--hold", "60"], name: sentinelName)
        let sentinelSeen = waitUntil(timeout: 60) { recorder.count("added", sentinelName) > 0 }
        let after = monitor.statistics      // (before the sentinel's own removal counts)
        if let sentinel {
            kill(sentinel.pid, SIGTERM)
            sentinel.wait()
        }
        waitUntil(timeout: 30) { recorder.count("removed", sentinelName) > 0 }
        let settled = waitUntil(timeout: 10) {
            openFileDescriptorCount() == fds0 && monitor.scopeCount == scopes0 && LiveResources.count == live0
        }
        let changes = recorder.changes(named: name)
        let info = changes.first { $0.change.kind == "added" }?.change.device
        let log = info.map { recorder.log(of: $0) } ?? Recorder.DeviceLog()
        // Every frame is a whole KEY_A+KEY_B pair, except the first two, the SYN_DROPPED frame
        // (with libevdev's resync in it: the reader's resync frame) and the tail of a frame
        // whose head the kernel dropped. The device types without pause, so it is opened half-way through a frame:
        // the keys down at open (`EvdevDevice.stateAtOpen`, the kernel's key bits, seen once as
        // KEY_B alone) and the first frame read (the rest of the one in progress) may each be
        // part of a pair, and only A and B. The last frame is the kernel's own: on disconnect it
        // releases the keys still down and closes the interrupted frame with a SYN_REPORT, so it
        // must leave every key released.
        var broken: [String] = []
        for (i, f) in log.frames.enumerated().dropLast() {
            // The drop: a lone SYN_DROPPED, or the reader's resync frame (the SYN_DROPPED, then
            // libevdev's resync of the keys, InputFrame.isResync).
            let isDrop = f.events.first.map { $0.type == EventType.syn && $0.code == SynCode.dropped } == true
                && f.events.dropFirst().allSatisfy { $0.type == EventType.key && [30, 48].contains($0.code) }
            let afterDrop = (1...2).contains { i >= $0 && log.frames[i - $0].events.first?.code == SynCode.dropped
                && log.frames[i - $0].events.first?.type == EventType.syn }
            if isDrop || afterDrop { continue }
            let whole = i < 2
                ? f.events.allSatisfy { $0.type == EventType.key && [30, 48].contains($0.code) }
                : f.events.map(\.code) == [30, 48] && f.events[0].value == f.events[1].value
            if !whole { broken.append("#\(i)/\(log.frames.count): \(describe([f]))") }
        }
        var keys: [UInt16: Int32] = [:]
        for f in log.frames { for e in f.events where e.type == EventType.key { keys[e.code] = e.value } }
        let released = !keys.isEmpty && keys.values.allSatisfy { $0 == 0 }
        // The kernel queues its release frame at the disconnect, but evdev_read answers ENODEV
        // as soon as the device is gone, queued events or not: a reader that was not already
        // reading loses that frame (seen once in 41 runs: last KEY_A=1 KEY_B=1). Then the last
        // frame read must still be a whole pair; releasing what is left is the hub's job
        // (DeviceHub's removal, the twin's releaseAll), tested there.
        let lastWhole = log.frames.last.map { $0.events.map(\.code) == [30, 48] } ?? false
        let partial = !broken.isEmpty || !(released || lastWhole)
        report.check(removed && status == 0 && info != nil, "vanish: device read, then destroyed mid-frame",
                     "helper exit \(status), \(log.frames.count) frames, \(after.synDropped - before.synDropped) SYN_DROPPED")
        report.check(after.removedOnENODEV - before.removedOnENODEV == 1,
                     "vanish: removal came from ENODEV, before udev's remove",
                     "ENODEV removals +\(after.removedOnENODEV - before.removedOnENODEV), udev removals +\(after.removedOnUdevRemove - before.removedOnUdevRemove)")
        report.check(sentinelSeen && changes.filter { $0.change.kind == "removed" }.count == 1
                        && after.removedOnUdevRemove == before.removedOnUdevRemove,
                     "vanish: removed exactly once although udev's remove followed",
                     changes.map(\.change.kind).joined(separator: ",") + "; sentinel announced after udev's remove: \(sentinelSeen)")
        report.check(log.completed && !partial, "vanish: frames whole, keys released by the kernel's last frame (or that frame lost to ENODEV), then completed",
                     "completed \(log.completed); last \(describe(Array(log.frames.suffix(1))))"
                        + (released ? "" : " (the kernel's release frame was lost to ENODEV)")
                        + (broken.isEmpty ? "" : "; broken \(broken.prefix(3))"))
        report.check(settled, "vanish: no leak",
                     "fds \(fds0)→\(openFileDescriptorCount() ?? -1), scopes \(scopes0)→\(monitor.scopeCount), live resources \(live0)→\(LiveResources.count)")
    }

    /// Permissions arriving late: a udev rule leaves the node mode 0000 owned by nobody, and
    /// the suite runs as nobody (effective uid) for the case. One node is made readable while
    /// the monitor retries: it ends `.added`. The other never is: `.inaccessible` after the
    /// retry budget (default, ~10 s), then `.removed` when it goes.
    static func permissions(_ monitor: InputDeviceMonitor, _ recorder: Recorder, _ report: Report) {
        let rules = "/etc/udev/rules.d/99-zz-evflow-e2e.rules"
        let rule = "SUBSYSTEM==\"input\", KERNEL==\"event*\", ATTRS{name}==\"\(prefix) locked*\", MODE:=\"0000\", OWNER:=\"nobody\"\n"
        guard let f = fopen(rules, "w") else {
            report.check(false, "permissions: write udev rule", String(cString: strerror(errno)))
            return
        }
        fputs(rule, f)
        fclose(f)
        defer {
            unlink(rules)
            run(["udevadm", "control", "--reload"])
        }
        run(["udevadm", "control", "--reload"])
        waitUntil(timeout: 5) { monitor.scopeCount == 1 }
        let fds0 = openFileDescriptorCount() ?? -1
        let live0 = LiveResources.count
        let retries0 = monitor.statistics.openRetries
        let fixedName = "\(prefix) locked fixed\(roundSuffix)"
        let neverName = "\(prefix) locked never\(roundSuffix)"
        let create = "\(scratch)/perm.create"
        let go = "\(scratch)/perm.go"
        let fixedNode = "\(scratch)/perm-fixed.node"
        for p in [create, go, fixedNode] { unlink(p) }
        // The helpers run as root (uinput needs it) and wait until the suite is "nobody".
        guard let fixed = try? Child.device("keyboard", ["--wait-before-create", create, "--node-file", fixedNode,
                                                         "--events", "@\(go) KEY_A=1 . KEY_A=0 .", "--hold", "0.3"], name: fixedName),
              let never = try? Child.device("keyboard", ["--wait-before-create", create, "--events", "", "--hold", "14"],
                                            name: neverName) else {
            report.check(false, "permissions: start helpers")
            return
        }
        guard let nobody = getpwnam("nobody")?.pointee.pw_uid, seteuid(nobody) == 0 else {
            report.check(false, "permissions: seteuid(nobody)", String(cString: strerror(errno)))
            touch(create); touch(go); fixed.wait(); never.wait()
            return
        }
        let created = monotonicNow()
        touch(create)
        // Wait until the monitor has failed at least twice on the locked node, then fix it.
        let node = waitUntil(timeout: 60) { readFile(fixedNode) != nil } ? readFile(fixedNode)! : ""
        // Udev done with the fixed node (the rule's owner applied) before it is fixed: the
        // helper names the node as soon as the kernel makes it, and when the never-readable
        // device came first its retries alone reached the count below while udev had not yet
        // handled this one; its rule then undid the chmod (or the chmod, by nobody, failed).
        let locked = waitUntil(timeout: 60) {
            var st = stat()
            return stat(node, &st) == 0 && st.st_uid == nobody && st.st_mode & 0o777 == 0
        }
        let retrying = waitUntil(timeout: 60) { monitor.statistics.openRetries - retries0 >= 4 }
        let chmodOK = chmod(node, 0o400) == 0
        let fixedAdded = waitUntil(timeout: 20) { recorder.count("added", fixedName) > 0 }
        touch(go)
        let neverGaveUp = waitUntil(timeout: 30) { recorder.count("inaccessible", neverName) > 0 }
        let gaveUpAfter = (recorder.changes(named: neverName).first { $0.change.kind == "inaccessible" }?.at ?? 0) - created
        _ = seteuid(0)
        fixed.wait()
        never.wait()
        waitUntil(timeout: 20) {
            recorder.count("removed", fixedName) > 0 && recorder.count("removed", neverName) > 0
        }
        let fixedKinds = recorder.changes(named: fixedName).map(\.change.kind)
        let neverChanges = recorder.changes(named: neverName)
        let reason: String = {
            if case .inaccessible(_, let r)? = neverChanges.first?.change { return r }
            return ""
        }()
        let fixedInfo = recorder.changes(named: fixedName).first { $0.change.kind == "added" }?.change.device
        let fixedFrames = fixedInfo.map { describe(recorder.log(of: $0).frames) } ?? ""
        report.check(locked && retrying && chmodOK && fixedAdded && fixedKinds == ["added", "removed"] && fixedFrames == "KEY_A=1 . KEY_A=0",
                     "permissions: EACCES retried with backoff; node made readable later → added and read",
                     "node \(node) (locked by udev \(locked), chmod \(chmodOK)), open retries (both devices) \(monitor.statistics.openRetries - retries0), changes \(fixedKinds), frames \(fixedFrames)")
        report.check(neverGaveUp && neverChanges.map(\.change.kind) == ["inaccessible", "removed"] && reason.contains("Permission denied")
                        && gaveUpAfter > 5_000_000_000 && gaveUpAfter < 20_000_000_000,
                     "permissions: never readable → inaccessible after the bounded retry, then removed",
                     "after \(gaveUpAfter / 1_000_000) ms: \(neverChanges.map(\.change.kind)), reason \"\(reason)\"")
        let settled = waitUntil(timeout: 10) { openFileDescriptorCount() == fds0 && monitor.scopeCount == 1 && LiveResources.count == live0 }
        report.check(settled, "permissions: no leak",
                     "fds \(fds0)→\(openFileDescriptorCount() ?? -1), scopes \(monitor.scopeCount), live resources \(live0)→\(LiveResources.count)"
                        + (settled ? "" : "; fds now: \(openFileDescriptorTargets())"))
    }
}

/// Runs one timer on the loop, and makes NSS load its modules, before the suite measures fd
/// baselines.
func warmUp(_ loop: InputLoop) {
    let fired = CounterBox()
    let timer = Observable<Int>.timer(.milliseconds(200), scheduler: loop).subscribe(onNext: { _ in fired.value = 1 })
    waitUntil(timeout: 5) { loop.sync { fired.value == 1 } }
    timer.dispose()
    _ = getpwnam("nobody")
}

/// Prints what might be stuck: the monitor queue, the helper's kernel wait channel, every
/// process not running.
func diagnose(loop: InputLoop, child: Child) {
    let sem = DispatchSemaphore(value: 0)
    loop.schedule { sem.signal() }
    let responsive = sem.wait(timeout: .now() + 2) == .success
    say("  diag: input loop responsive \(responsive); helper: \(child.logTail())")
    guard let dir = opendir("/proc") else { return }
    defer { closedir(dir) }
    while let e = readdir(dir) {
        let pid = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard Int(pid) != nil else { continue }
        let stat = readFile("/proc/\(pid)/stat") ?? ""
        let wchan = readFile("/proc/\(pid)/wchan") ?? ""
        let cmd = readFile("/proc/\(pid)/comm") ?? ""
        if cmd.hasPrefix("kworker") || cmd.hasPrefix("ksoftirq") || cmd.hasPrefix("rcu") || cmd.hasPrefix("migration") || cmd.hasPrefix("cpuhp") || cmd.hasPrefix("idle_inject") { continue }
        let state = stat.split(separator: ")").last?.split(separator: " ").first ?? "?"
        if wchan != "0" && !wchan.isEmpty || state != "S" {
            say("  diag: \(pid) \(cmd) \(state) \(wchan)")
        }
    }
}

/// A counter touched only on the input loop and read after it settled.
final class CounterBox: @unchecked Sendable {
    var value = 0
}
