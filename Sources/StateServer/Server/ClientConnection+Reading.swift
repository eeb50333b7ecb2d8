import EvflowProtocol
import NIOCore

/// Request lines in, answers out, and the pace of reads: what one client can make the server hold.
extension ClientConnection {
    // MARK: - Requests (event loop)

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard !loop.value.closed else { return }
        loop.value.framer.append(bytes)
        if loop.value.accepted { processLines() }
    }

    // MARK: - Back-pressure (event loop)
    //
    // What one client can make the server hold is bounded: requests are taken from the channel
    // only while the connection is admitted, no answer is pending (`LATENCY`, `METRICS`), every
    // line already received is answered, and its replies are being written (the channel is
    // writable). Otherwise the read is held, so the client's requests wait in the kernel's socket
    // buffers and its `send` blocks. Held at most: one read cycle (`maxMessagesPerRead` reads of
    // at most `maxReadSize` bytes) of request lines, an unfinished line (the line limit), the
    // replies answered before the channel went over its high water mark (the last of them of
    // any size: a reply is delivered whole, however large), and stream messages up to the
    // outgoing-buffer limit (then the client is dropped as a slow consumer).

    /// Largest buffer one read of a client's socket fills: request lines are at most 4 KiB.
    static let maxReadSize = 16 * 1024
    /// Reads per read cycle.
    static let maxMessagesPerRead = 4

    /// Whether the connection takes more request bytes now.
    var acceptsInput: Bool {
        loop.value.accepted && !loop.value.closed && !loop.value.answering && loop.value.writable
            && !loop.value.framer.hasItems
    }

    /// The channel's read was held back (`ClientChannelHandler.read`).
    func holdRead() {
        loop.value.readHeld = true
    }

    /// Asks the channel for the read held back, if one was and input is taken again.
    private func resumeReading() {
        guard loop.value.readHeld, acceptsInput else { return }
        loop.value.readHeld = false
        channel.read()
    }

    /// The channel went above its high water mark of unwritten bytes (false) or back below the
    /// low one (true): requests wait meanwhile.
    func writabilityChanged(_ writable: Bool) {
        loop.value.writable = writable
        if writable { processLines() }
    }

    /// Request lines one client has answered per event-loop turn. Beyond it the rest wait for a
    /// job of their own, after every other channel's I/O of this turn: a client pipelining
    /// thousands of requests delays another client's answer by one budget per busy client, not
    /// by its whole backlog (scripts/check-abuse: 10 such clients, a PING answered within
    /// 100 ms).
    static let requestsPerTurn = 32

    /// Answers the complete request lines received, in order, until one is answered
    /// asynchronously, the replies are not being taken, or the turn's budget is spent; then
    /// reads again if it may. Each reply is handed to the channel as it is made, so the
    /// channel's writability stops the loop as soon as the client stops taking them.
    func processLines() {
        guard !loop.value.processing else { return }
        loop.value.processing = true
        var spoke = false
        var answered = 0
        defer {
            loop.value.processing = false
            // Watchers may stay silent for ever; anyone else gets the idle limit again.
            if spoke && !loop.value.closed {
                if loop.value.watch == nil { armIdleTimer() } else { cancelIdleTimer() }
            }
            if answered == Self.requestsPerTurn { continueNextTurn() }
            resumeReading()
        }
        while !loop.value.closed, !loop.value.answering, loop.value.writable, answered < Self.requestsPerTurn,
              let item = loop.value.framer.next() {
            switch item {
            case .overlong:
                loop.value.heardFrom = true
                spoke = true
                answered += 1
                respond { $0.appendError(ProtocolError(.lineTooLong(limit: ProtocolConstants.maxRequestLineLength))) }
            case .line(let line):
                if Request.isBlank(line) { continue }
                loop.value.heardFrom = true
                spoke = true
                answered += 1
                do {
                    let request = try Request.parse(line)
                    handle(request)
                } catch {
                    respond { $0.appendError(error) }
                }
            }
        }
    }

    /// Runs `processLines` again as a job of its own when lines are left (once at a time).
    private func continueNextTurn() {
        guard loop.value.framer.hasItems, !loop.value.closed, !loop.value.continuationScheduled else { return }
        loop.value.continuationScheduled = true
        channel.eventLoop.execute { [weak self] in
            guard let self else { return }
            self.loop.value.continuationScheduled = false
            self.processLines()
        }
    }

    /// Encodes one response with the connection's writer and sends it (event loop).
    func respond(flush: Bool = true, _ body: (inout MessageWriter) -> Void) {
        loop.value.writer.reset()
        body(&loop.value.writer)
        _ = enqueue(loop.value.writer.bytes, generation: nil)
        if flush { self.flush() }
    }
}
