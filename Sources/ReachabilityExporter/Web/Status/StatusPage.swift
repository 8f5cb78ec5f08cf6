import ReachabilityVerdict

/// The status page at `/`: the current verdict big and clear with its reason and how long it has
/// held, per family and uplink, a table of probes, and links. No JavaScript, no external assets;
/// it refreshes itself. It renders from the monitor's latest status in memory (and, when history
/// is on, from its cached summary), never from the history files per request.
package struct StatusPage: Sendable {
    /// Extra sections (history pictures) rendered below the probe table.
    package typealias Section = @Sendable () -> String

    let status: @Sendable () -> ReachabilityStatus?
    let now: @Sendable () -> Double
    var sections: [Section] = []
    var refreshSeconds = 10
    /// Where the metrics are, for the footer's link (every link is relative).
    package var paths = WebPaths()

    package init(
        status: @escaping @Sendable () -> ReachabilityStatus?, now: @escaping @Sendable () -> Double = { unixNow() }
    ) {
        self.status = status
        self.now = now
    }

    package mutating func addSection(_ section: @escaping Section) { sections.append(section) }

    package func render() -> String {
        let s = status()
        let t = now()
        var body = "<h1>reachability_exporter</h1>\n"
        if let s {
            body += verdictBlock(s.overall, now: t)
            if let f = s.fault, f.location != .none { body += breaksAt(f, id: "fault") }
            body += captivePortals(s, now: t)
            body += scopes(s, now: t)
            body += probeTable(s, now: t)
        } else {
            body += verdictBlock(ScopedVerdict(verdict: .unknown, since: t), now: t)
            body += "<p>Waiting for the first probe round.</p>\n"
        }
        for section in sections { body += section() }
        body += """
            <footer><a href="\(WebPaths.link(from: "/", to: paths.telemetry))">Metrics</a> · \
            <a href="./-/healthy">Health</a> · <a href="./-/ready">Readiness</a> · \
            version \(HTML.escape(BuildInfo.version)) · refreshes every \(refreshSeconds) s</footer>

            """
        return page(title: "reachability: \(s?.state.rawValue ?? "unknown")", body: body)
    }

    func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width,initial-scale=1">
        <link rel="icon" href="data:,">
        <meta http-equiv="refresh" content="\(refreshSeconds)">
        <title>\(HTML.escape(title))</title>
        <style>\(HTML.css)</style></head>
        <body><main>
        \(body)</main></body></html>

        """
    }

    private func verdictBlock(_ v: ScopedVerdict, now: Double) -> String {
        let st = HTML.style(v.verdict.state)
        let why = v.verdict.reason.map { "reason: \(HTML.escape($0.label)) · " } ?? ""
        return """
            <div class="verdict" id="verdict" data-state="\(v.verdict.state.rawValue)" style="background:\(st.colour)" role="status">
            <span class="sym" aria-hidden="true">\(st.symbol)</span>
            <div><div class="state">\(st.label)</div><div class="why">\(why)for \(HTML.age(now - v.since))</div></div>
            </div>

            """
    }

    /// "breaks at: gateway — gateway 192.168.1.1 on wlan0: no ARP reply" (the detail can quote
    /// remote servers: escaped).
    private func breaksAt(_ f: Fault, id: String) -> String {
        let detail = f.detail.isEmpty ? "" : " — \(HTML.escape(f.detail))"
        return
            "<p class=\"fault\" id=\"\(HTML.escape(id))\" data-location=\"\(f.location.rawValue)\">breaks at: <strong>\(f.location.rawValue)</strong>\(detail)</p>\n"
    }

    /// What each network's captive-portal API said: a link to log in while it holds this host
    /// captive. The network wrote these URLs: `https` (venue: or `http`) only, no control
    /// characters (`CaptivePortalAnswer`), escaped, opened without a referrer.
    private func captivePortals(_ s: ReachabilityStatus, now: Double) -> String {
        var out = ""
        for p in s.captivePortals {
            let id = HTML.escape("captive-portal-\(p.interface)")
            let link = { (url: String, text: String) in
                "<a href=\"\(HTML.escape(url))\" rel=\"noopener noreferrer\">\(text)</a>"
            }
            var line = "captive portal on <strong>\(HTML.escape(p.interface))</strong> (\(p.source.rawValue)): "
            if let a = p.answer {
                line += a.captive ? "the network holds this host captive" : "the network says it is not captive"
                if let login = a.userPortalURL {
                    line +=
                        a.captive
                        ? " — " + link(login, "log in at \(HTML.escape(login))") : " · " + link(login, "portal")
                }
                if let left = p.secondsRemaining(at: now) { line += " · \(HTML.age(left)) left" }
                if let venue = a.venueInfoURL { line += " · " + link(venue, "venue information") }
            } else {
                line += "no answer: \(HTML.escape(p.problem?.message ?? "not read yet"))"
            }
            out += "<p class=\"captive\" id=\"\(id)\" data-captive=\"\(p.captive)\">\(line)</p>\n"
        }
        return out
    }

    private func scopes(_ s: ReachabilityStatus, now: Double) -> String {
        var cards: [String] = []
        for family in IPFamily.allCases {
            if let v = s.families[family] {
                cards.append(
                    card(
                        family == .ipv4 ? "IPv4" : "IPv6", v, now: now, id: family.rawValue,
                        fault: s.faults[.family(family)]))
            }
        }
        for (uplink, v) in s.uplinks.sorted(by: { $0.key < $1.key }) {
            cards.append(
                card("uplink \(uplink)", v, now: now, id: "uplink-\(uplink)", fault: s.faults[.uplink(uplink)]))
        }
        guard !cards.isEmpty else { return "" }
        return "<div class=\"scopes\">\(cards.joined())</div>\n"
    }

    private func card(_ title: String, _ v: ScopedVerdict, now: Double, id: String, fault: Fault?) -> String {
        let st = HTML.style(v.verdict.state)
        let reason = v.verdict.reason.map { " (\(HTML.escape($0.label)))" } ?? ""
        let breaks =
            fault.map { $0.location == .none ? "" : "<br><small>breaks at: \(HTML.escape($0.description))</small>" }
            ?? ""
        return
            "<div class=\"scope\" id=\"scope-\(HTML.escape(id))\" data-state=\"\(v.verdict.state.rawValue)\" style=\"border-left-color:\(st.colour)\"><strong>\(HTML.escape(title))</strong><br>\(st.symbol) \(st.label)\(reason)\(breaks)<br><small>for \(HTML.age(now - v.since))</small></div>"
    }

    private func probeTable(_ s: ReachabilityStatus, now: Double) -> String {
        var rows = ""
        for p in s.probes {
            let r = p.result
            // A round the probe could not run (no path) is "not run", not a failure.
            let cls = !p.ran ? "none" : r.status == .success ? "ok" : r.status == .portal ? "portal" : "bad"
            let symbol = !p.ran ? "–" : r.status == .success ? "✔" : r.status == .portal ? "⎆" : "✖"
            let result = p.ran ? r.status.rawValue : "not run"
            let target = MetricsRecorder.targetLabel(p.name, p.interface)
            var timing = HTML.milliseconds(r.duration)
            if let icmp = r.icmp { timing += " · loss \(Int((icmp.lossRatio * 100).rounded()))%" }
            let phases = r.phases.sorted { $0.key < $1.key }.map { "\($0.key.rawValue) \(HTML.milliseconds($0.value))" }
                .joined(separator: ", ")
            rows += """
                <tr class="probe" data-status="\(p.ran ? r.status.rawValue : "not_run")"><td>\(p.type.rawValue)</td>\
                <td><a href="./debug/probe?name=\(HTML.escape(urlEncode(target)))">\(HTML.escape(target))</a></td>\
                <td class="\(cls)">\(symbol) \(result)</td><td>\(HTML.escape(r.reason?.rawValue ?? ""))</td>\
                <td class="num">\(timing)</td><td><small>\(HTML.escape(phases))</small></td>\
                <td class="num">\(Self.loss(p))</td><td>\(p.lastSuccess.map { "\(HTML.age(now - $0)) ago" } ?? "never")</td>\
                <td>\(HTML.age(now - p.at)) ago</td></tr>

                """
        }
        return """
            <section><h2>Probes (round \(s.round))</h2>
            <table><thead><tr><th>Type</th><th>Target</th><th>Result</th><th>Reason</th><th>Time</th><th>Phases</th><th title="runs that did not succeed, of the last \(ProbeRecent.window)">Loss</th><th>Last success</th><th>Checked</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></section>

            """
    }

    /// The probe's recent loss: its failed share of its last runs, with the counts written out.
    static func loss(_ p: ProbeOutcome) -> String {
        guard p.recentRuns > 0 else { return "–" }
        let percent = Int((Double(p.recentFailures) / Double(p.recentRuns) * 100).rounded())
        return "\(percent)% <small>(\(p.recentFailures)/\(p.recentRuns))</small>"
    }

    /// `/debug/probe?name=…`: the last round of one probe in detail, like blackbox_exporter's
    /// `debug=true`.
    package func renderDebug(name: String) -> String? {
        guard let s = status(),
            let p = s.probes.first(where: { MetricsRecorder.targetLabel($0.name, $0.interface) == name })
        else { return nil }
        let r = p.result
        var lines = [
            "probe: \(p.type.rawValue)", "name: \(name)", "destination: \(p.target)",
            "interface: \(p.interface ?? "(routing table)")", "status: \(r.status.rawValue)",
            "reason: \(r.reason?.rawValue ?? "-")", "duration: \(HTML.milliseconds(r.duration))",
            "address: \(r.address ?? "-")", "family: \(r.family?.rawValue ?? "-")",
            "last success: \(p.lastSuccess.map(UTCTime.rfc3339) ?? "never (since the exporter started)")",
            "recent runs failed: \(p.recentFailures) of \(p.recentRuns)",
        ]
        for (phase, d) in r.phases.sorted(by: { $0.key < $1.key }) {
            lines.append("phase \(phase.rawValue): \(HTML.milliseconds(d))")
        }
        if let h = r.http {
            lines.append("http status: \(h.statusCode.map(String.init) ?? "-")")
            if let l = h.location { lines.append("location: \(l)") }
            lines.append("body bytes: \(h.bodyBytes), redirects: \(h.redirects)")
            if let v = h.tlsVersion { lines.append("tls: \(v) \(h.tlsCipher ?? "")") }
            if let e = h.certificateNotAfter {
                lines.append("certificate expires: \(Logger.rfc3339(seconds: Int(e), millis: 0))")
            }
        }
        if let i = r.icmp {
            lines.append("icmp: sent \(i.sent), received \(i.received), loss \(i.lossRatio)")
            lines.append("rtts: " + i.rtts.map(HTML.milliseconds).joined(separator: ", "))
            if let ttl = i.ttl { lines.append("ttl: \(ttl)" + (i.hops.map { " (\($0) hops)" } ?? "")) }
        }
        if let d = r.dns {
            lines.append("dns rcode: \(d.rcode.map(String.init) ?? "-"), answers: \(d.answers)")
            lines.append("addresses: " + d.addresses.joined(separator: ", "))
        }
        lines.append("detail: \(r.detail)")
        let body =
            "<h1>Probe \(HTML.escape(name))</h1>\n<pre id=\"debug\">\(HTML.escape(lines.joined(separator: "\n")))</pre>\n<p><a href=\"../\">Back</a></p>\n"
        return page(title: "probe \(name)", body: body)
    }
}

func urlEncode(_ s: String) -> String {
    var out = ""
    for b in s.utf8 {
        switch b {
        case 0x30...0x39, 0x41...0x5a, 0x61...0x7a, UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(b))
        default:
            let hex = String(b, radix: 16, uppercase: true)
            out += "%" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return out
}
