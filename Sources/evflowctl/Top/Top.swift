import ArgumentParser
import EvflowProtocol
import Foundation
import InputModel
import OptionValues
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// `top`: a live view of the daemon like htop — devices with their rates, share filtered,
/// chatter, held keys and latency; clients with their rates. Redraws in place on a terminal
/// (raw mode, restored on every way out); plain lines, one table per refresh, otherwise.
struct Top: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live view of devices and clients: event rates, % filtered, chatter, held keys, latency (q quits).",
        discussion: """
        Keys: i, o, f, c, l, n sort by events in, events out, % filtered, chatter, p99 latency, \
        name; r reverses; q (or Ctrl-C) quits. When standard output is not a terminal, each \
        refresh is printed as plain lines. Rates are per second over the last refresh; CHATTER \
        counts the key events the debounce filter dropped since the device appeared; P50/P99 \
        are the ages of frames leaving the filter (LATENCY, stage filtered).
        """)
    @OptionGroup var global: GlobalOptions
    /// Nanoseconds; parsed and range-checked by OptionValues (issue #34: `1e10`, `inf` trapped).
    @Option(name: .long, parsing: .unconditional, help: "Seconds between refreshes, 0.1 to 86400 (default 1).",
            transform: { try OptionValues.topInterval($0) })
    var interval: Int64 = 1_000_000_000
    @Option(name: .long, help: "Stop after this many refreshes.") var iterations: Int?
    @Option(name: .long, help: "Sort column: \(TopSort.allCases.map(\.rawValue).joined(separator: ", ")).")
    var sort: String = TopSort.eventsIn.rawValue

    func validate() throws {
        guard TopSort(rawValue: sort) != nil else { throw ValidationError("unknown sort column '\(sort)'") }
    }

    func run() throws {
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            installStopHandlers()
            let screen = isatty(STDOUT_FILENO) == 1
            let terminal = screen ? RawTerminal() : nil
            // Every way out of here (q, a signal, the daemon going away, an error) passes this.
            defer { terminal?.restore() }
            var sortColumn = TopSort(rawValue: sort)!
            var descending = sortColumn != .name
            var previous: TopSample?
            var current = try Self.sample(client)
            var drawn = 0
            while stopRequested == 0 {
                let size = terminal?.size ?? (width: Int.max, height: Int.max)
                let lines = TopScreen.lines(current, previous: previous, sort: sortColumn, descending: descending,
                                            width: size.width, height: size.height)
                if terminal != nil {
                    // Home, each line then clear to its end, clear below: no flicker, no scrolling.
                    RawTerminal.write("\u{1B}[H" + lines.map { $0.text + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
                } else {
                    print(lines.map(\.text).joined(separator: "\n") + "\n")
                    fflush(nil)   // `stdout` is not concurrency-safe to name
                }
                drawn += 1
                if let iterations, drawn >= iterations { break }
                // Wait for the next sample, answering keys as they come: a key redraws the
                // same sample at once (rates stay over a whole interval).
                let deadline = current.time + interval
                var resample = true
                waiting: while stopRequested == 0 {
                    let left = deadline - SessionCapture.monotonicNow()
                    guard left > 0 else { break }
                    let slice = Int32(min(left / 1_000_000 + 1, 200))
                    guard let terminal else { usleep(UInt32(slice) * 1000); continue }
                    guard let key = terminal.readKey(timeoutMillis: slice) else { continue }
                    switch key {
                    case "q", "Q": return
                    case "r": descending.toggle()
                    default:
                        guard let column = TopSort.allCases.first(where: { $0.key == key }) else { continue }
                        if column != sortColumn { descending = column != .name }
                        sortColumn = column
                    }
                    resample = false
                    break waiting
                }
                if resample && stopRequested == 0 {
                    previous = current
                    current = try Self.sample(client)
                }
            }
        }
    }

    /// STATS, DEVICES, STATE of each device and LATENCY, asked in turn on one connection.
    static func sample(_ client: DaemonClient) throws -> TopSample {
        guard case .stats(let stats, _) = try client.request(Request(.stats)).message,
              case .devices(let devices, _, _) = try client.request(Request(.devices)).message,
              case .latency(let latency, _) = try client.request(Request(.latency)).message else {
            throw CtlFailure.protocolError("unexpected reply")
        }
        var states: [DeviceStateReport] = []
        for d in devices {
            do {
                guard case .state(let s, _) = try client.request(Request(.state(device: d.id.rawValue))).message else {
                    throw CtlFailure.protocolError("unexpected reply")
                }
                states.append(s)
            } catch let failure as CtlFailure where failure.code == 65 {
                continue   // removed between DEVICES and STATE
            }
        }
        return TopSample(time: SessionCapture.monotonicNow(), stats: stats, states: states, latency: latency)
    }
}

/// The terminal in the mode `top` needs: keys arrive one by one without echo, on the
/// alternate screen with the cursor hidden. Signals stay on (Ctrl-C is SIGINT, which `top`
/// turns into a clean exit); `restore()` puts everything back and is safe to call twice.
final class RawTerminal {
    private var saved = termios()
    private let hasInput: Bool
    private var restored = false

    init() {
        hasInput = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &saved) == 0
        if hasInput {
            var raw = saved
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            // VMIN 0, VTIME 0: a read returns at once; poll() does the waiting.
            withUnsafeMutableBytes(of: &raw.c_cc) { cc in
                cc[Int(VMIN)] = 0
                cc[Int(VTIME)] = 0
            }
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        }
        Self.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    deinit { restore() }

    /// Back to the terminal as it was: the main screen, the cursor, the saved mode.
    func restore() {
        guard !restored else { return }
        restored = true
        Self.write("\u{1B}[?25h\u{1B}[?1049l")
        if hasInput { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }

    /// Writes to the terminal at once (unbuffered).
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// The window size (80×24 when the terminal does not say).
    var size: (width: Int, height: Int) {
        var w = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0, w.ws_row > 0 else { return (80, 24) }
        return (Int(w.ws_col), Int(w.ws_row))
    }

    /// One key, waiting up to `timeoutMillis`; nil when none came (or there is no keyboard).
    func readKey(timeoutMillis: Int32) -> Character? {
        guard hasInput else {
            usleep(UInt32(max(0, timeoutMillis)) * 1000)
            return nil
        }
        var p = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, timeoutMillis) == 1 else { return nil }
        var byte: UInt8 = 0
        guard read(STDIN_FILENO, &byte, 1) == 1 else { return nil }
        return Character(Unicode.Scalar(byte))
    }
}
