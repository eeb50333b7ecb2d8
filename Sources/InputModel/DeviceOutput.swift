/// What a device source can do with a device besides reading it: make a uinput virtual twin,
/// grab the physical device, and write filtered frames to the twin (`output: virtual`,
/// docs/virtual-device.md).
///
/// Implemented by `InputDevices` for live devices; `nil` in a `DeviceStream` that has no kernel
/// device behind it (a replay). The hub calls it on its scheduler (the input thread) only, in
/// this order: `createTwin`, `grab`, any number of `write`s, then `releaseAll`, `destroyTwin`
/// and `ungrab` — so no key is left down on the twin and the physical device is given back
/// last (around a suspend, `releaseAll` and `keysDown` also come between the writes). Tests
/// drive the hub with a fake one.
public protocol DeviceOutputPort: AnyObject, Sendable {
    /// Why this device cannot be re-emitted (e.g. its force feedback cannot be forwarded), or nil when it can.
    var virtualRefusal: String? { get }
    /// Creates the virtual twin (a clone of the device); returns its device node.
    func createTwin() throws(DeviceOutputError) -> String
    /// Grabs the physical device (EVIOCGRAB), so only evflowd reads it. Returns the time
    /// (CLOCK_MONOTONIC ns, the clock of the device's frames) taken just after the grab took
    /// effect: a frame stamped at or before it may have reached every other reader too.
    func grab() throws(DeviceOutputError) -> Int64
    /// Writes one frame to the twin: its events, then one `SYN_REPORT`.
    func write(_ frame: InputFrame) throws(DeviceOutputError)
    /// Writes a release for every key and button held on the twin, then a `SYN_REPORT`.
    /// Best effort (the twin may be gone), never fails.
    func releaseAll()
    /// Destroys the twin (releasing what is still held first). Idempotent.
    func destroyTwin()
    /// Gives the physical device back (no-op when it is not grabbed or gone). Idempotent.
    func ungrab()
    /// The keys and buttons down on the physical device now, as the kernel has them
    /// (`EVIOCGKEY`), not as far as its events have been read: what the twin is set to after
    /// a resume (docs/virtual-device.md, "Suspend and resume"). Nil when the device cannot be
    /// asked (it is gone or closed).
    func keysDown() -> Set<UInt16>?
}

/// A `DeviceOutputPort` operation failed.
public struct DeviceOutputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Hashable, Sendable {
        /// Another program holds a grab on the device (EBUSY).
        case busy
        /// Any other failure.
        case failed
    }

    /// What failed.
    public var kind: Kind
    /// The call and the system's message, e.g. `libevdev_grab(/dev/input/event3): Device or resource busy`.
    public var message: String

    /// An error of `kind` described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// Where a device's filtered stream goes and how far that got: the `output` of DEVICES and STATE.
public struct DeviceOutputStatus: Hashable, Sendable, Codable {
    /// Whether the device is grabbed.
    public enum Grab: String, Hashable, Sendable, Codable {
        /// Not grabbed: the mode is `observe`, or something stopped it (`reason` says what).
        case none
        /// The twin exists; the grab waits until no key or button is held on the device.
        case waiting
        /// Grabbed: applications read the filtered stream from the twin.
        case grabbed
    }

    /// The configured mode.
    public var mode: OutputMode
    /// The twin's device node while it exists.
    public var virtualNode: String?
    /// Whether the physical device is grabbed.
    public var grab: Grab
    /// Why a device in `virtual` mode is not grabbed, e.g. `not grabbed: another program holds
    /// a grab (EBUSY)`; nil otherwise.
    public var reason: String?

    /// A status.
    public init(mode: OutputMode, virtualNode: String? = nil, grab: Grab = .none, reason: String? = nil) {
        self.mode = mode
        self.virtualNode = virtualNode
        self.grab = grab
        self.reason = reason
    }

    /// An observed device's status.
    public static let observed = DeviceOutputStatus(mode: .observe)
}

/// Counters of what a device's twin was written (STATS).
public struct DeviceOutputCounters: Hashable, Sendable {
    /// Frames written to the twin.
    public var framesWritten: Int
    /// Writes to the twin that failed (each one ends the grab).
    public var writeErrors: Int

    /// Counters.
    public init(framesWritten: Int = 0, writeErrors: Int = 0) {
        self.framesWritten = framesWritten
        self.writeErrors = writeErrors
    }
}
