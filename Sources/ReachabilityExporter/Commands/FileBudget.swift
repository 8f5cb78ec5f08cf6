import ReachabilityVerdict

/// How the process's open-file limit is shared: descriptors are set aside first for what must
/// never starve (probe sockets, the history, path monitoring, the reactor, scrapes' reads of
/// /proc, the runtime), and the web server gets what is left, so a flood of connections can
/// fail a connection but never a probe (a false outage) or the history. A limit that cannot
/// hold the probes is refused at start with a clear error, before any thread could fail.
struct FileBudget {
    let openFiles: UInt64
    let options: ExporterOptions
    /// The uplinks the probes start on (`uplinks: auto` as the path shows it now).
    let uplinks: [String]
    let server: HTTPServer.Options
    /// `/probe`'s places for all clients (8 x `--modules.max-concurrent`); 0 without it.
    var probeEndpointPlaces = 0

    /// Descriptors the process itself needs at most, outside probes and web connections:
    /// standard streams, epoll and its eventfds, netlink, history, the listener, /proc reads.
    static let base: UInt64 = 64

    /// Probe sockets open at once: each running probe holds a socket and, while it resolves a
    /// name, one more; at most `maxConcurrentProbes` run together.
    var probes: UInt64 {
        var settings = options.settings
        settings.uplinks = uplinks
        let jobs = options.specs.reduce(0) { $0 + settings.interfaces(of: $1).count }
        return UInt64(min(jobs, options.settings.maxConcurrentProbes)) * 2
    }

    /// Reads of captive-portal APIs at once: one per uplink and per default route's interface
    /// (overall, IPv4, IPv6), a socket each and one while resolving.
    var captivePortalAPIs: UInt64 {
        options.settings.captivePortal.enabled ? UInt64(uplinks.count + 3) * 2 : 0
    }

    /// Everything but the web connections: the base, the probes, the captive-portal APIs,
    /// `/probe`'s probes (a socket each and one while resolving), one per worker thread.
    var reserved: UInt64 {
        Self.base + probes + captivePortalAPIs + UInt64(probeEndpointPlaces) * 2 + UInt64(server.workers)
    }

    /// The server options with the connection limits cut to what the budget leaves (logged),
    /// or exit status 1 when the limit cannot hold the probes and a few connections.
    func check(_ logger: Logger) -> Result<HTTPServer.Options, ExitStatus> {
        let minimumConnections: UInt64 = 8
        guard openFiles >= reserved + minimumConnections else {
            writeErr(
                "reachability_exporter: error: the open-file limit (\(openFiles)) is too low for \(options.specs.count) "
                    + "probes"
                    + (probeEndpointPlaces > 0
                        ? " and /probe's \(probeEndpointPlaces) places (8 x --modules.max-concurrent)" : "")
                    + ": at least \(reserved + minimumConnections) file descriptors are needed; raise it "
                    + "(ulimit -n, LimitNOFILE=) or run fewer probes\n")
            return .failure(ExitStatus(1))
        }
        var out = server
        let room = Int(min(openFiles - reserved, 1 << 30))
        if room < out.maxConnections {
            logger.warn(
                "the open-file limit leaves room for fewer web connections than --web.max-connections; raise LimitNOFILE",
                ("limit", openFiles), ("reserved", reserved),
                ("max_connections", room))
            out.maxConnections = room
            out.maxConnectionsPerIP = min(out.maxConnectionsPerIP, room)
        }
        return .success(out)
    }
}
