import ReachabilityVerdict

/// `reachability_exporter history`: the outage log and availability per day from a history
/// directory (across rotated files), as a table, JSON or CSV. Reads only; safe to run while
/// the exporter writes (a line being written is skipped as torn).
package enum HistoryCommand {
    static let flags: [FlagSpec] = [
        FlagSpec("history.dir", .value(default: nil), placeholder: "DIR", help: "The exporter's --history.dir."),
        FlagSpec("since", .value(default: "30d"), placeholder: "DURATION", help: "Report this far back from now."),
        FlagSpec("output", .value(default: "table"), placeholder: "FORMAT", help: "table, json or csv."),
        FlagSpec("help", .bool(default: false), help: "Show this help and exit."),
    ]

    static var usage: String {
        "usage: reachability_exporter history --history.dir=DIR [--since=DURATION] [--output=table|json|csv]\n\n"
            + "Prints the outages (start, end, duration, scope, state, reason) and the availability per UTC day.\n"
            + "`history export --help`: the verdict series as OpenMetrics for backfilling Prometheus.\n\nFlags:\n"
            + FlagParser(flags).helpText() + "\n"
    }

    /// Runs the command and returns the exit status (64 usage, 1 unreadable directory).
    package static func main(_ args: [String], now: Double = unixNow()) -> Int32 {
        if args.first == "export" { return HistoryExportCommand.main(Array(args.dropFirst()), now: now) }
        let dir: String
        let since: Duration
        let format: ReportFormat
        do throws(UsageError) {
            let parsed = try FlagParser(flags).parse(args)
            if parsed.bool("help") {
                writeOut(usage)
                return 0
            }
            (dir, since) = try window(parsed)
            format = try parsed.choice("output", as: ReportFormat.self) ?? .table
        } catch {
            writeErr("reachability_exporter history: error: \(error.message), try --help\n")
            return 64
        }
        let report: OutageReport
        do { report = try OutageReport.build(directory: dir, since: since, now: now) } catch {
            writeErr("reachability_exporter history: error: cannot read \(dir): \(error.errno)\n")
            return 1
        }
        writeOut(report.render(format))
        if report.stats.corrupt > 0 && format != .table {
            writeErr("reachability_exporter history: skipped \(report.stats.corrupt) corrupt lines\n")
        }
        return 0
    }

    /// `--history.dir` (required) and `--since` (default 30d, above 0, at most 100y): the
    /// window every history subcommand reads.
    static func window(_ parsed: ParsedFlags) throws(UsageError) -> (dir: String, since: Duration) {
        guard let dir = parsed.string("history.dir"), !dir.isEmpty else {
            throw UsageError("required flag '--history.dir' not provided")
        }
        let since = try parsed.duration("since") ?? .seconds(30 * 86_400)
        guard since > .zero else { throw UsageError("invalid value for flag '--since': must be above 0") }
        guard since <= .seconds(100 * 365 * 86_400) else {
            throw UsageError("invalid value for flag '--since': at most 100y")
        }
        return (dir, since)
    }
}
