import ReachabilityVerdict

/// `reachability_exporter check`: one round, a short human verdict (or JSON), and an exit
/// status scripts can branch on — the seed library's one-shot `check()`.
package enum CheckCommand {
    /// Exit statuses: 0 full; 2 limited; 3 portal; 4 none; 1 unknown (no round).
    package static func exitStatus(_ state: ConnectivityState) -> Int32 {
        switch state {
        case .full: 0
        case .limited: 2
        case .portal: 3
        case .none: 4
        case .unknown: 1
        }
    }

    static let flags: [FlagSpec] =
        ProbeFlags.specs + [
            ConfigWiring.flag,
            FlagSpec("output", .value(default: "text"), placeholder: "FORMAT", help: "text or json."),
            FlagSpec(
                "trace", .bool(default: false),
                help:
                    "After the round, trace the last hop that answers toward each probe's address (TTL-limited ICMP echoes, hops 1-\(ICMPGatewayProber.traceHops), one each), healthy or not."
            ),
            FlagSpec("help", .bool(default: false), help: "Show this help and exit."),
        ]

    package static func main(_ args: [String]) async -> Int32 {
        let parsed: ParsedFlags
        let json: Bool
        do throws(UsageError) {
            parsed = try FlagParser(flags).parse(args)
            if parsed.bool("help") {
                writeOut(
                    "usage: reachability_exporter check [<flags>]\n\nRuns one probe round and prints the verdict.\nExit status: 0 full, 2 limited, 3 portal, 4 none.\n\nFlags:\n\(FlagParser(flags).helpText())\n"
                )
                return 0
            }
            let output = parsed.string("output") ?? "text"
            guard output == "text" || output == "json" else {
                throw UsageError("invalid value \(output.debugDescription) for flag '--output': expected text or json")
            }
            json = output == "json"
        } catch {
            writeErr("reachability_exporter: error: \(error.message), try --help\n")
            return 64
        }
        let file: ExporterConfig?
        switch ConfigWiring.loadFile(parsed) {
        case .success(let f): file = f?.config
        case .failure(let exit): return exit.code
        }
        let logger = Logger(level: .error)
        let path = PathWatch(enabled: ExporterOptions.pathMonitorEnabled(parsed, file: file))
        if let problem = path.problem { logger.warn("path monitor unavailable; probes alone decide", ("err", problem)) }
        // The probes and settings, resolved as for the daemon (flags over the file).
        let options: ExporterOptions
        switch ConfigWiring.setup(parsed, file: file, path: path.gate, logger: logger) {
        case .success(let o): options = o
        case .failure(let exit): return exit.code
        }
        if let problem = ProbeFlags.checkICMPPermission(options.specs) {
            writeErr("reachability_exporter: ICMP probes cannot run: \(problem)\n")
            return 1
        }
        let core = ReachabilityCore(path: path, probes: options.specs, settings: options.settings)
        if let warning = core.evidenceWarning { writeErr("reachability_exporter: warning: \(warning)\n") }
        // What the routers announce (captive-portal API, PREF64), asked for before the round.
        await path.solicitRouters()
        // One round decides: no hysteresis for a one-shot answer.
        let status = await core.check()
        let traces = parsed.bool("trace") ? await trace(status, path: path.gate) : nil
        writeOut(json ? renderJSON(status, traces: traces) : renderText(status) + (traces.map(renderTraces) ?? ""))
        return exitStatus(status.state)
    }

    /// One probe's trace for `--trace`: where it went, out of which route, and what came back.
    struct ProbeTrace {
        var probe: String
        var route: GatewayRoute?
        var trace: LastHopTrace?
    }

    /// Traces toward each distinct (address, interface) the round's probes used, all at once,
    /// within 2 s: at most `traceHops` echoes each.
    static func trace(_ status: ReachabilityStatus, path: any PathGate) async -> [ProbeTrace] {
        var seen: Set<String> = []
        var wanted: [(probe: String, address: String, route: GatewayRoute?, interface: String?)] = []
        for p in status.probes {
            guard let address = p.result.address, let parsed = SocketAddress(ip: address),
                LastHopTrace.isRouted(parsed.addressBytes),
                seen.insert("\(parsed.ip)%\(p.interface ?? "")").inserted
            else { continue }
            let scope: Scope = p.interface.map { .uplink($0) } ?? .family(parsed.ipFamily)
            wanted.append(
                (
                    MetricsRecorder.targetLabel(p.name, p.interface), parsed.ip, path.gatewayRoute(for: scope),
                    p.interface
                ))
        }
        let prober = ICMPGatewayProber()
        let deadline = ContinuousClock.now + .seconds(2)
        return await withTaskGroup(of: (Int, LastHopTrace?).self) { group in
            for (i, w) in wanted.enumerated() {
                let route =
                    w.route
                    ?? GatewayRoute(
                        family: SocketAddress(ip: w.address)!.ipFamily, gateway: nil, interface: w.interface ?? "")
                group.addTask { (i, await prober.trace(toward: w.address, route: route, deadline: deadline)) }
            }
            var out = wanted.map { ProbeTrace(probe: $0.probe, route: $0.route) }
            for await (i, t) in group { out[i].trace = t }
            return out
        }
    }

    /// Like traceroute: one line per hop up to the destination's reply, then the summary.
    /// Addresses come from the network: no raw control character reaches the terminal.
    static func renderTraces(_ traces: [ProbeTrace]) -> String {
        var out: [String] = []
        for t in traces {
            guard let trace = t.trace else { continue }
            let via = t.route.map { " via \($0.interface)" + ($0.gateway.map { " (gateway \($0))" } ?? "") } ?? ""
            out.append("trace toward \(trace.destination) (\(t.probe))\(via):")
            for (i, answer) in trace.answers.enumerated() {
                let line: String
                switch answer {
                case .timeExceeded(let a): line = a
                case .error(let a, let text): line = "\(a)  \(text)"
                case .reached(let a): line = "\(a)  reached"
                case .silent: line = "*"
                case .notSent(let text): line = "not sent: \(text)"
                }
                out.append("  \(i < 9 ? " " : "")\(i + 1)  \(line)")
                if case .reached = answer { break }
            }
            out.append("  → \(traceSummary(trace, gateway: t.route?.gateway))")
        }
        return out.map { $0.escapingControlCharacters + "\n" }.joined()
    }

    static func renderText(_ s: ReachabilityStatus) -> String {
        var out = "\(s.overall.verdict.state.rawValue)"
        if let r = s.overall.verdict.reason { out += " (\(r.label.escapingControlCharacters))" }
        out += "\n"
        func breaks(_ scope: Scope) -> String {
            guard let f = s.faults[scope], f.location != .none else { return "" }
            return " — breaks at: \(f.description.escapingControlCharacters)"
        }
        if let f = s.fault, f.location != .none {
            out += "  breaks at: \(f.description.escapingControlCharacters)\n"
        }
        for family in IPFamily.allCases {
            if let v = s.families[family] { out += "  \(family.rawValue): \(v.verdict)\(breaks(.family(family)))\n" }
        }
        for (uplink, v) in s.uplinks.sorted(by: { $0.key < $1.key }) {
            out += "  uplink \(uplink): \(v.verdict)\(breaks(.uplink(uplink)))\n"
        }
        for p in s.probes {
            let ms = (p.result.duration.seconds * 1000 * 10).rounded() / 10
            var line =
                "  \(p.type.rawValue) \(MetricsRecorder.targetLabel(p.name, p.interface)): \(p.result.status.rawValue)"
            if let r = p.result.reason { line += " (\(r.rawValue))" }
            line += " in \(ms) ms"
            if let hops = p.result.icmp?.hops, p.result.succeeded { line += ", \(hops) hops" }
            if !p.result.detail.isEmpty && p.result.status != .success { line += " — \(p.result.detail)" }
            // Details come from the network: no raw control character reaches the terminal.
            out += line.escapingControlCharacters + "\n"
        }
        let nat64 = s.nat64Prefixes
        if !nat64.isEmpty { out += "  nat64 prefix: \(nat64.map(\.description).joined(separator: ", "))\n" }
        for p in s.captivePortals {
            out += CaptivePortalText.line(p, now: s.roundStarted).escapingControlCharacters + "\n"
        }
        for f in s.captivePortalIgnored {
            out += "  captive portal hook file \(f) ignored: others could have written it\n".escapingControlCharacters
        }
        return out
    }

    static func renderJSON(_ s: ReachabilityStatus, traces: [ProbeTrace]? = nil) -> String {
        func fault(_ scope: Scope) -> String {
            guard let f = s.faults[scope] else { return "null" }
            let last = f.lastHop.map { ",\"last_hop\":" + lastHopJSON($0) } ?? ""
            return
                "{\"location\":\(Logger.jsonString(f.location.rawValue)),\"detail\":\(Logger.jsonString(f.detail))\(last)}"
        }
        func verdict(_ v: Verdict, _ scope: Scope) -> String {
            "{\"state\":\(Logger.jsonString(v.state.rawValue)),\"reason\":\(v.reason.map { Logger.jsonString($0.label) } ?? "null"),"
                + "\"fault\":\(fault(scope))}"
        }
        let families = IPFamily.allCases.compactMap { f in
            s.families[f].map { "\(Logger.jsonString(f.rawValue)):\(verdict($0.verdict, .family(f)))" }
        }
        let uplinks = s.uplinks.sorted { $0.key < $1.key }.map {
            "\(Logger.jsonString($0.key)):\(verdict($0.value.verdict, .uplink($0.key)))"
        }
        let probes = s.probes.map { p -> String in
            var fields = [
                "\"name\":\(Logger.jsonString(p.name))", "\"type\":\(Logger.jsonString(p.type.rawValue))",
                "\"target\":\(Logger.jsonString(p.target))",
                "\"status\":\(Logger.jsonString(p.result.status.rawValue))",
                "\"reason\":\(p.result.reason.map { Logger.jsonString($0.rawValue) } ?? "null")",
                "\"duration_seconds\":\(p.result.duration.seconds)", "\"detail\":\(Logger.jsonString(p.result.detail))",
            ]
            if let i = p.interface { fields.append("\"interface\":\(Logger.jsonString(i))") }
            if let mtu = p.result.mtu { fields.append("\"path_mtu_bytes\":\(mtu)") }
            if let ttl = p.result.icmp?.ttl { fields.append("\"ttl\":\(ttl)") }
            if let hops = p.result.icmp?.hops { fields.append("\"hops\":\(hops)") }
            return "{" + fields.joined(separator: ",") + "}"
        }
        return
            "{\"state\":\(Logger.jsonString(s.state.rawValue)),\"reason\":\(s.overall.verdict.reason.map { Logger.jsonString($0.label) } ?? "null"),"
            + "\"fault\":\(fault(.overall)),\"families\":{\(families.joined(separator: ","))},\"uplinks\":{\(uplinks.joined(separator: ","))},"
            + "\"probes\":[\(probes.joined(separator: ","))],"
            + (traces.map { "\"traces\":[\($0.compactMap(traceJSON).joined(separator: ","))]," } ?? "")
            + "\"nat64_prefixes\":[\(s.nat64Prefixes.map { Logger.jsonString($0.description) }.joined(separator: ","))],"
            + "\"captive_portals\":[\(s.captivePortals.map { CaptivePortalText.json($0, now: s.roundStarted) }.joined(separator: ","))],"
            + "\"captive_portal_ignored_files\":[\(s.captivePortalIgnored.map(Logger.jsonString).joined(separator: ","))]}\n"
    }
}

extension CheckCommand {
    /// On demand, a trace whose target answers is simply reached (the fault detail's wording,
    /// "yet it answers", is for a scope that is failing).
    static func traceSummary(_ trace: LastHopTrace, gateway: String?) -> String {
        if let last = trace.lastHop(gateway: gateway), last.reached {
            return "reached \(trace.destination) at hop \(last.hop)"
        }
        return trace.summary(gateway: gateway)
    }

    static func lastHopJSON(_ h: LastHop) -> String {
        "{\"hop\":\(h.hop),\"address\":\(Logger.jsonString(h.address)),\"destination\":\(Logger.jsonString(h.destination)),"
            + "\"reached\":\(h.reached),\"past_gateway\":\(h.pastGateway.map(String.init) ?? "null"),"
            + "\"error\":\(h.error.map(Logger.jsonString) ?? "null"),\"silent_hops\":[\(h.silentHops.map(String.init).joined(separator: ","))]}"
    }

    static func traceJSON(_ t: ProbeTrace) -> String? {
        guard let trace = t.trace else { return nil }
        let hops = trace.answers.enumerated().map { i, a -> String in
            let (answer, address, text): (String, String?, String?) =
                switch a {
                case .timeExceeded(let x): ("time_exceeded", x, nil)
                case .error(let x, let e): ("error", x, e)
                case .reached(let x): ("reached", x, nil)
                case .silent: ("silent", nil, nil)
                case .notSent(let e): ("not_sent", nil, e)
                }
            return "{\"hop\":\(i + 1),\"answer\":\"\(answer)\",\"address\":\(address.map(Logger.jsonString) ?? "null"),"
                + "\"detail\":\(text.map(Logger.jsonString) ?? "null")}"
        }
        return "{\"probe\":\(Logger.jsonString(t.probe)),\"destination\":\(Logger.jsonString(trace.destination)),"
            + "\"interface\":\(t.route.map { Logger.jsonString($0.interface) } ?? "null"),"
            + "\"gateway\":\(t.route?.gateway.map(Logger.jsonString) ?? "null"),"
            + "\"last_hop\":\(trace.lastHop(gateway: t.route?.gateway).map(lastHopJSON) ?? "null"),"
            + "\"summary\":\(Logger.jsonString(traceSummary(trace, gateway: t.route?.gateway))),\"hops\":[\(hops.joined(separator: ","))]}"
    }
}

/// Logs transitions at info and every round at debug.
struct RoundLogger: RoundObserver {
    let logger: Logger

    func uplinksAdopted(_ added: [String], uplinks: [String]) {
        logger.info(
            "uplinks added (uplinks: auto)", ("added", added.joined(separator: ",")),
            ("uplinks", uplinks.joined(separator: ",")))
    }

    func roundCompleted(_ status: ReachabilityStatus) {
        for t in status.transitions {
            logger.info(
                "state changed", ("scope", t.scope.label), ("from", t.transition.from.description),
                ("to", t.transition.to.description))
        }
        logger.debug(
            "round", ("n", status.round), ("state", status.overall.verdict.description),
            ("duration_ms", status.roundDuration.milliseconds))
    }
}
