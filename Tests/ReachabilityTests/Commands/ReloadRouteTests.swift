import Foundation
import Glibc
import ReachabilityTestSupport
import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `POST /-/reload` through the real server, with the reload held in `apply` as a long round holds it.
@Suite struct ReloadRouteTests {
    /// Found by a hostile review (#41): 16 reloads waiting behind a round held the 16 web workers,
    /// so scrapes timed out, and afterwards every one of them ran. Here the server has 2 workers.
    @Test func waitingReloadsHoldNoWorkerAndShareOneReload() async throws {
        let path = NSTemporaryDirectory() + "rx-reload-route-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).yml"
        try "global:\n  path_monitor: false\nprobes:\n  - type: tcp\n    target: 127.0.0.1:9\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let env = [ProbeFlags.refuseDefaultsVariable: "1"]
        let flags = try FlagParser(ExporterCommand.serveFlags).parse([])
        let setup = try ExporterOptions.resolve(flags: flags, file: ConfigLoader.load(path: path), environment: env)
        let gate = JobGate()
        let reloader = ConfigReloader(
            path: path, flags: flags, environment: env, initial: setup, registry: MetricsRegistry(),
            logger: Logger(level: .error, fd: -1)
        ) { _, settings, _ in
            await gate.pass()
            return settings
        }
        let service = Task { await reloader.run() }
        defer { service.cancel() }

        var routes = WebRoutes(registry: MetricsRegistry())
        routes.add(ConfigWiring.reloadRoute(reloader, enabled: true))
        var options = HTTPServer.Options()
        options.workers = 2
        let server = try HTTPServer(
            listen: ListenAddress(host: "127.0.0.1", port: 0), options: options, logger: Logger(level: .error)
        ) { [routes] in await routes.handle($0) }
        server.start()
        defer { server.shutdown() }
        let port = server.boundAddress.port
        let post = "POST /-/reload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"

        let first = try RawTCPClient(port: port)
        first.send(post)
        #expect(await eventually { gate.arrived == 1 }, "the first reload reached apply")
        let later = try (0..<24).map { _ in try RawTCPClient(port: port) }
        for client in later { client.send(post) }
        #expect(await eventually { reloader.requests.waiting == 25 })

        // Every reload waits; a scrape is still answered.
        // Read off the cooperative pool (blocking reads); each client is used by one thread at a time.
        nonisolated(unsafe) let scrape = try RawTCPClient(port: port, timeoutMS: 3000)
        scrape.send("GET /-/healthy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let healthy = await runOffCooperativePool { scrape.readResponse() }
        #expect(healthy.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(healthy.debugDescription)")

        gate.open()
        nonisolated(unsafe) let clients = [first] + later
        let answers = await runOffCooperativePool { clients.map { $0.readResponse() } }
        for answer in answers {
            #expect(answer.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answer.prefix(200).debugDescription)")
        }
        #expect(reloader.requests.runs == 2, "one reload, and one more for every request that came during it")
        #expect(gate.arrived == 2)
    }
}
