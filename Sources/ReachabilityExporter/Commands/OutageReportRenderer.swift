import ReachabilityVerdict

/// Output formats of `reachability_exporter history`.
package enum ReportFormat: String, Sendable, CaseIterable {
    case table, json, csv
}

/// Renders an `OutageReport` as an aligned table, one JSON document, or CSV (the outage table,
/// a blank line, then the per-day table, each with a header row). Times are UTC RFC 3339.
extension OutageReport {
    package func render(_ format: ReportFormat) -> String {
        switch format {
        case .table: renderTable()
        case .json: renderJSON()
        case .csv: renderCSV()
        }
    }

    static func percent(_ v: Double) -> String {
        guard v.isFinite else { return "-" }
        let scaled = Int((v * 100_000).rounded())
        let whole = scaled / 1000
        let frac = scaled % 1000
        return "\(whole).\(String(repeating: "0", count: 3 - String(frac).count))\(frac)%"
    }

    static func duration(_ seconds: Double) -> String {
        DurationParser.format(.seconds(Int64(max(0, seconds).rounded())))
    }

    private static func table(_ rawRows: [[String]]) -> String {
        // Reasons and fault details are read from files: no raw control character reaches the terminal.
        let rows = rawRows.map { $0.map(\.escapingControlCharacters) }
        guard let header = rows.first else { return "" }
        var widths = header.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        return rows.map { row in
            row.enumerated().map { i, cell in
                i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count)
            }
            .joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    private var outageRows: [[String]] {
        [["START", "END", "DURATION", "SCOPE", "STATE", "REASON", "ENDED", "BREAKS AT"]]
            + outages.map {
                [
                    UTCTime.rfc3339($0.start), UTCTime.rfc3339($0.end), Self.duration($0.duration), $0.scope.label,
                    $0.state.rawValue, $0.reason?.label ?? "-", $0.ended.rawValue, $0.fault?.description ?? "-",
                ]
            }
    }

    private var dayRows: [[String]] {
        [["DAY", "AVAILABILITY", "COVERAGE", "UP", "DOWN", "GAP"]]
            + days.map {
                [
                    UTCTime.date(day: $0.day), Self.percent($0.availability), Self.percent($0.coverage),
                    Self.duration($0.up), Self.duration($0.down), Self.duration($0.gap),
                ]
            }
    }

    private func renderTable() -> String {
        let length = to - from
        var out = "History from \(UTCTime.rfc3339(from)) to \(UTCTime.rfc3339(to)) (\(Self.duration(length)))\n"
        out +=
            "Read \(stats.rounds) rounds in \(stats.files) files (\(stats.bytes) bytes); \(stats.corrupt) corrupt lines skipped"
        if stats.skipped > 0 { out += ", \(stats.skipped) lines of a newer format skipped" }
        if stats.unreadable > 0 { out += ", \(stats.unreadable) files unreadable (\(stats.firstError ?? ""))" }
        out += ".\n\n"
        out +=
            "Availability (overall): \(Self.percent(total.availability)) of covered time; coverage \(Self.percent(length > 0 ? total.covered / length : 0))\n"
        out +=
            "  "
            + windows.map { entry in
                "\(entry.label): \(Self.percent(entry.window.availability)) (coverage \(Self.percent(Self.coverage(entry))))"
            }.joined(separator: "  ") + "\n\n"
        out += "Outages (\(outages.count)):\n"
        out += outages.isEmpty ? "  none\n" : Self.table(outageRows)
        out += "\nAvailability per day (UTC):\n" + Self.table(dayRows)
        return out
    }

    private func renderCSV() -> String {
        func csv(_ rows: [[String]]) -> String {
            rows.map {
                $0.map(\.escapingControlCharacters).map { cell in
                    cell.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline })
                        ? "\"" + cell.replacingAll("\"", "\"\"") + "\"" : cell
                }.joined(separator: ",")
            }.joined(separator: "\n") + "\n"
        }
        let outagesCSV =
            [["start", "end", "duration_seconds", "scope", "state", "reason", "ended", "location", "fault"]]
            + outages.map {
                [
                    UTCTime.rfc3339($0.start), UTCTime.rfc3339($0.end), String(Int($0.duration.rounded())),
                    $0.scope.label,
                    $0.state.rawValue, $0.reason?.label ?? "", $0.ended.rawValue, $0.fault?.location.rawValue ?? "",
                    $0.fault?.detail ?? "",
                ]
            }
        let daysCSV =
            [["day", "availability", "coverage", "up_seconds", "down_seconds", "gap_seconds"]]
            + days.map {
                [
                    UTCTime.date(day: $0.day), Self.ratio($0.availability), Self.ratio($0.coverage),
                    String(Int($0.up.rounded())), String(Int($0.down.rounded())), String(Int($0.gap.rounded())),
                ]
            }
        return csv(outagesCSV) + "\n" + csv(daysCSV)
    }

    static func coverage(_ entry: (label: String, window: AvailabilityLedger.Window)) -> Double {
        let length = HistoryMetrics.windows.first { $0.label == entry.label }?.seconds ?? 0
        return length > 0 ? min(1, entry.window.covered / length) : 0
    }

    static func ratio(_ v: Double) -> String {
        guard v.isFinite else { return "" }
        return String((v * 1_000_000).rounded() / 1_000_000)
    }

    private func renderJSON() -> String {
        var w = JSONWriter(capacity: 4096)
        func ratio(_ key: String, _ v: Double) {
            w.key(key)
            if v.isFinite { w.value(v, decimals: 6) } else { w.null() }
        }
        w.beginObject()
        w.field("from", UTCTime.rfc3339(from))
        w.field("to", UTCTime.rfc3339(to))
        ratio("availability", total.availability)
        ratio("coverage", to > from ? total.covered / (to - from) : 0)
        w.key("windows")
        w.beginArray()
        for (label, win) in windows {
            w.beginObject()
            w.field("window", label)
            ratio("availability", win.availability)
            ratio("coverage", Self.coverage((label, win)))
            w.endObject()
        }
        w.endArray()
        w.key("outages")
        w.beginArray()
        for o in outages {
            w.beginObject()
            w.field("scope", o.scope.label)
            w.field("start", UTCTime.rfc3339(o.start))
            w.field("end", UTCTime.rfc3339(o.end))
            w.field("start_unix", o.start, decimals: 3)
            w.field("end_unix", o.end, decimals: 3)
            w.field("duration_seconds", o.duration, decimals: 3)
            w.field("state", o.state.rawValue)
            w.key("reason")
            if let r = o.reason { w.value(r.label) } else { w.null() }
            w.field("ended", o.ended.rawValue)
            w.key("location")
            if let f = o.fault { w.value(f.location.rawValue) } else { w.null() }
            w.key("fault")
            if let f = o.fault, !f.detail.isEmpty { w.value(f.detail) } else { w.null() }
            w.endObject()
        }
        w.endArray()
        w.key("days")
        w.beginArray()
        for d in days {
            w.beginObject()
            w.field("day", UTCTime.date(day: d.day))
            ratio("availability", d.availability)
            ratio("coverage", d.coverage)
            w.field("up_seconds", d.up, decimals: 3)
            w.field("down_seconds", d.down, decimals: 3)
            w.field("gap_seconds", d.gap, decimals: 3)
            w.endObject()
        }
        w.endArray()
        w.key("records")
        w.beginObject()
        w.field("files", stats.files)
        w.field("rounds", stats.rounds)
        w.field("corrupt", stats.corrupt)
        w.field("skipped", stats.skipped)
        w.field("unreadable", stats.unreadable)
        w.endObject()
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self) + "\n"
    }
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation).
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: Substring(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
