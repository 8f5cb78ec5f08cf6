import ReachabilityVerdict

/// The HTTP server as a `Service` (`web`): bound when the server was made (so a port in use is a
/// start-up error), serving from the start of `run()` until cancelled, then shut down with a
/// 2 s grace for answers in flight. `ready` runs once it accepts, with the bound addresses (the
/// exporter logs them and tells systemd).
package struct WebService: Service {
    package let name = "web"
    package let server: HTTPServer
    package let ready: @Sendable ([SocketAddress]) -> Void

    package init(_ server: HTTPServer, ready: @escaping @Sendable ([SocketAddress]) -> Void = { _ in }) {
        self.server = server
        self.ready = ready
    }

    package func run() async {
        server.start()
        ready(server.boundAddresses)
        await untilCancelled()
        server.shutdown(grace: .seconds(2))
    }
}
