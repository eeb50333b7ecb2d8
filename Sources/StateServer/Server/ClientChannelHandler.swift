import NIOCore
import Reactive

/// Forwards a connection's NIO events to its `ClientConnection`, and holds the channel's reads
/// while the connection takes no input (back-pressure: the client's requests then wait in the
/// kernel's socket buffers, and its `send` blocks, instead of piling up in the server).
final class ClientChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer

    private let client: ClientConnection
    private let scope: LiveResources.Scope?

    init(client: ClientConnection, scope: LiveResources.Scope?) {
        self.client = client
        self.scope = scope
    }

    /// Runs `body` in the server starter's `LiveResources` scope, if it had one.
    private func counted(_ body: () -> Void) {
        if let scope { LiveResources.$scope.withValue(scope, operation: body) } else { body() }
    }

    func channelActive(context: ChannelHandlerContext) {
        counted { client.activate() }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        counted { buffer.withUnsafeReadableBytes { client.received($0) } }
    }

    /// A read is asked for (after each read cycle, NIO's auto-read): passed on only while the
    /// connection takes input; otherwise held until `ClientConnection.resumeReading`.
    func read(context: ChannelHandlerContext) {
        if client.acceptsInput {
            context.read()
        } else {
            client.holdRead()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        counted { client.writabilityChanged(writable) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        counted { client.inactive() }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
