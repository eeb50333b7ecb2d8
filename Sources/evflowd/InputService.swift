#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import DeviceIO
import InputDevices
import InputModel
import Logging
import Pipeline
import Reactive
import Sensors
import ServiceLifecycle
import StateServer
import Synchronization

/// Feeds the hub from the input source; ready once the first enumeration is done; on
/// shutdown disposes every device session (readers stop, fds close, streams complete). A
/// failure of the source fails the service — and so the daemon, with exit code 71 — at start
/// (before READY) or later: the daemon never runs on without its input.
struct InputService: Service {
    let source: InputSource
    let hub: DeviceHub
    let scheduler: InputLoop
    let ready: Latch
    let logger: Logger

    /// How long shutdown waits for the sensor thread to stop its readings.
    static let sensorStopWait = RxTimeInterval.seconds(1)

    func run() async throws {
        let baseline = LiveResources.count
        let logger = self.logger
        let notices = hub.spuriousNotices.subscribe(onNext: { notice in
            logger.notice("spurious-release debounce turned on for \(EventNames.codeText(type: EventType.key, code: notice.code)) of \(notice.device.id) (\(notice.device.name)): a release was followed by a re-press that stayed down; releases of this code are now held for the spurious window")
        })
        let outputNotices = hub.outputNotices.subscribe(onNext: { notice in
            logger.notice("\(notice.device.id) (\(notice.device.name)): \(notice.message)")
        })
        let failure = Mutex<(any Error)?>(nil)
        let stop = Latch()   // opened by a failure of the source, or at shutdown
        // The device count when the input became ready, read on the input thread then (read
        // later, from here, it raced the replay's start: 0 or 1 for the same file).
        let enumerated = Latch()
        let present = Atomic<Int>(0)
        let hub = self.hub
        let sourceReady = source.ready?.take(1).subscribe(onNext: {
            present.store(hub.deviceCount, ordering: .relaxed)
            enumerated.open()
        })
        let subscription = hub.run(source.devices, onError: { error in
            failure.withLock { $0 = error }
            stop.open()
            enumerated.open()
        })
        let sensorSubscription = hub.sensors.run(source.sensors, onError: { error in
            failure.withLock { $0 = error }
            stop.open()
        })
        // The hub subscribes the source on the input scheduler, which enumerates there: a job
        // scheduled after it runs once the present devices are known (or the source failed).
        // A replay announces its first devices one job later, and says when (`ready`).
        if sourceReady == nil {
            scheduler.schedule {
                present.store(hub.deviceCount, ordering: .relaxed)
                enumerated.open()
            }
        }
        // A SIGTERM before the input is ready ends the wait (a replay's burst of 200,000
        // hot-plug steps at time 0 kept it for 24 s, and SIGTERM waited: issue #34); the
        // later services, waiting for this one, stop first.
        let enumeratedInTime = await cancelWhenGracefulShutdown { await enumerated.wait() }
        sourceReady?.dispose()
        if let error = failure.withLock({ $0 }) {
            notices.dispose()
            outputNotices.dispose()
            await endSensorThread()
            source.batteryThread?.shutdown()
            throw StartupError.input("input source failed: \(error)")
        }
        if enumeratedInTime {
            let count = present.load(ordering: .relaxed)
            logger.info("input ready: \(count) device\(count == 1 ? "" : "s")\(source.readyNote)")
            ready.open()
            // Until shutdown, or until the source fails.
            await cancelWhenGracefulShutdown {
                await withTaskCancellationHandler { await stop.opened() } onCancel: { stop.open() }
            }
        } else {
            logger.notice("stopping before the input was ready")
        }
        let finished = Latch()
        scheduler.schedule {
            subscription.dispose()
            sensorSubscription.dispose()
            notices.dispose()
            outputNotices.dispose()
            finished.open()
        }
        await finished.opened()
        await endSensorThread()
        // Its reads were stopped with the sessions; one blocked in a driver is not waited for.
        source.batteryThread?.shutdown()
        if let error = failure.withLock({ $0 }) {
            throw StartupError.input("input source failed: \(error)")
        }
        logger.info("input stopped: all device sessions disposed",
                    metadata: ["live_resources": "\(LiveResources.count)", "before_start": "\(baseline)"])
        withExtendedLifetime(source.retain) {}
    }

    /// Ends the sensor thread (this service owns it: it stops the sensors' consumers). The
    /// sensors' stops were queued on their thread by the disposal: they run first (buffers off
    /// and restored, fds closed), but shutdown never waits longer than `sensorStopWait` on a
    /// read that blocks in its driver (docs/architecture.md, "Threads"). Awaited, not blocked
    /// on: Swift concurrency's jobs run on the event loop, where nothing may block.
    private func endSensorThread() async {
        guard let thread = source.sensorThread else { return }
        let drained = Latch()
        let waited = Latch()
        thread.loop.schedule {
            drained.open()
            waited.open()
        }
        let timeout = scheduler.schedule(after: Self.sensorStopWait) { waited.open() }
        await waited.opened()
        timeout.dispose()
        // Ends after its current turn (or, stuck in a read, after that read).
        thread.shutdown(waitingUpTo: .zero)
        if !drained.isOpen {
            logger.notice("sensor thread: a read still blocks after \(Self.sensorStopWait.nanoseconds / 1_000_000) ms; not waiting for it")
        }
    }
}
