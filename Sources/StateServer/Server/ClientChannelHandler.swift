import NIOCore
import Reactive

/// Forwards a connection's NIO events to its `ClientConnection`.
final class ClientChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

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

    func channelInactive(context: ChannelHandlerContext) {
        counted { client.inactive() }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}
