import ReachabilityVerdict

/// Minimal HTML building for the status pages: escaping and a few formatters. No templates,
/// no external assets.
enum HTML {
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// `3d 4h`, `12m 5s`, `850ms` — the two largest units.
    static func age(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        if seconds < 1 { return "\(Int(max(0, seconds) * 1000))ms" }
        var s = Int(min(seconds, 1e15))
        let units = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
        var parts: [String] = []
        for (name, size) in units where s >= size || (name == "s" && parts.isEmpty) {
            parts.append("\(s / size)\(name)")
            s %= size
            if parts.count == 2 { break }
        }
        return parts.joined(separator: " ")
    }

    static func milliseconds(_ d: Duration) -> String { milliseconds(seconds: d.seconds) }

    /// Any value is shown, never trapped on: stored and network data can hold anything.
    static func milliseconds(seconds: Double) -> String {
        guard seconds.isFinite else { return "? ms" }
        let ms = seconds * 1000
        return ms < 10 ? String((ms * 100).rounded() / 100) + " ms" : String((ms * 10).rounded() / 10) + " ms"
    }

    /// The colour and symbol of a state: never colour alone.
    static func style(_ state: ConnectivityState) -> (colour: String, symbol: String, label: String) {
        switch state {
        case .full: ("#1a7f37", "✔", "Full")
        case .limited: ("#9a6700", "⚠", "Limited")
        case .portal: ("#8250df", "⎆", "Captive portal")
        case .none: ("#cf222e", "✖", "No network")
        case .unknown: ("#57606a", "?", "Unknown")
        }
    }

    static let css = """
        body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
        main{max-width:1100px;margin:0 auto;padding:16px}
        h1{font-size:20px;margin:0 0 12px}
        .verdict{border-radius:10px;padding:18px 22px;color:#fff;display:flex;gap:18px;align-items:center}
        .verdict .sym{font-size:44px;line-height:1}
        .verdict .state{font-size:30px;font-weight:700}
        .verdict .why{font-size:16px;opacity:.95}
        .scopes{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
        .scope{background:#fff;border:1px solid #d0d7de;border-left:8px solid;border-radius:8px;padding:8px 12px;min-width:170px}
        table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d0d7de;border-radius:8px}
        th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #eaeef2;vertical-align:top}
        th{background:#f6f8fa;font-weight:600}
        td.num{text-align:right;font-variant-numeric:tabular-nums}
        .ok{color:#1a7f37}.bad{color:#cf222e}.portal{color:#8250df}
        section{margin:18px 0}
        h2{font-size:16px;margin:0 0 8px}
        footer{color:#57606a;font-size:13px;margin-top:20px}
        a{color:#0969da}
        pre{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:10px;white-space:pre-wrap}
        svg.chart{display:block;width:100%;height:auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;font:12px system-ui,sans-serif}
        svg .axis{fill:#57606a;font-size:12px}svg .pct{fill:#1f2328;font-size:11px;font-weight:600}
        svg .tick,svg .grid{stroke:#d0d7de;stroke-width:1}svg .slot{fill:#f6f8fa}
        svg .segsym{fill:#fff;font-size:18px;font-weight:700}
        svg .band{fill:#0969da;fill-opacity:.18}svg .avg{fill:none;stroke:#0969da;stroke-width:1.6}svg .dot{fill:#0969da}svg .loss{fill:#cf222e}
        .legend{margin:6px 0;color:#57606a;font-size:14px}.key{margin-right:16px;white-space:nowrap}
        .scopeband{margin:8px 0}.bandlabel{font-size:13px;font-weight:600}.bandshare{color:#57606a}
        .scopeband svg.chart{height:14px;border-radius:3px;margin-top:2px}
        .swatch{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:4px;vertical-align:-1px}
        .rttblock h3{font-size:14px;margin:12px 0 4px}.rttblock small{color:#57606a;font-weight:400}.note{color:#57606a}
        """
}
