import ReachabilityVerdict

/// `reachability_exporter history export`: the verdict series from a history directory as
/// OpenMetrics with timestamps (`HistoryExport`), for backfilling a Prometheus TSDB:
///
///     reachability_exporter history export --history.dir=DIR --since=7d \
///         --labels=job=reachability,instance=edge-1:10361 > backfill.om
///     promtool tsdb create-blocks-from openmetrics backfill.om DATA_DIR
package enum HistoryExportCommand {
    static let flags: [FlagSpec] = [
        FlagSpec("history.dir", .value(default: nil), placeholder: "DIR", help: "The exporter's --history.dir."),
        FlagSpec("since", .value(default: "30d"), placeholder: "DURATION", help: "Export this far back from now."),
        FlagSpec("format", .value(default: "openmetrics"), placeholder: "FORMAT", help: "openmetrics (the only one)."),
        FlagSpec(
            "step", .value(default: "15s"), placeholder: "DURATION",
            help: "Time between samples (1s to 1h); a scrape interval's worth is what Prometheus would have."),
        FlagSpec(
            "labels", .value(default: nil), placeholder: "NAME=VALUE,...",
            help: "Labels for every series, as the live ones carry them (job, instance, site)."),
        FlagSpec("help", .bool(default: false), help: "Show this help and exit."),
    ]

    static var usage: String {
        "usage: reachability_exporter history export --history.dir=DIR [--since=DURATION] [--step=DURATION] [--labels=job=...,instance=...] [--format=openmetrics]\n\n"
            + "Writes the verdict series (state gauges, reachability_internet_reachable, per family and uplink, transitions)\n"
            + "reconstructed from the history, with timestamps, ending in # EOF: input for\n"
            + "`promtool tsdb create-blocks-from openmetrics`.\n\nFlags:\n" + FlagParser(flags).helpText() + "\n"
    }

    enum Format: String, CaseIterable { case openmetrics }

    /// Runs the command and returns the exit status (64 usage, 1 unreadable directory).
    package static func main(_ args: [String], now: Double = unixNow()) -> Int32 {
        let dir: String
        let since: Duration
        let step: Duration
        let labels: [(String, String)]
        do throws(UsageError) {
            let parsed = try FlagParser(flags).parse(args)
            if parsed.bool("help") {
                writeOut(usage)
                return 0
            }
            (dir, since) = try HistoryCommand.window(parsed)
            step = try parsed.duration("step") ?? .seconds(15)
            guard step >= .seconds(1), step <= .seconds(3600) else {
                throw UsageError("invalid value for flag '--step': must be from 1s to 1h")
            }
            _ = try parsed.choice("format", as: Format.self)
            labels = try parseLabels(parsed.string("labels") ?? "")
        } catch {
            writeErr("reachability_exporter history export: error: \(error.message), try --help\n")
            return 64
        }
        let export: HistoryExport
        do { export = try HistoryExport.build(directory: dir, since: since, now: now) } catch {
            writeErr("reachability_exporter history export: error: cannot read \(dir): \(error.errno)\n")
            return 1
        }
        export.renderOpenMetrics(step: step.seconds, labels: labels) { writeOut($0) }
        if export.stats.corrupt > 0 {
            writeErr("reachability_exporter history export: skipped \(export.stats.corrupt) corrupt lines\n")
        }
        return 0
    }

    /// `job=reachability,instance=a:1`: valid label names, none reserved by the series themselves.
    static func parseLabels(_ text: String) throws(UsageError) -> [(String, String)] {
        var out: [(String, String)] = []
        let reserved: Set<String> = ["family", "interface", "state", "scope", "reason", "from", "to", "__name__"]
        for item in text.split(separator: ",") {
            let kv = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(kv[0]).trimmingSpacesString
            guard kv.count == 2, MetricName.isValidLabelName(name), !name.hasPrefix("__") else {
                throw UsageError(
                    "invalid value for flag '--labels': \(String(item).debugDescription) is not NAME=VALUE with a Prometheus label name"
                )
            }
            guard !reserved.contains(name), !out.contains(where: { $0.0 == name }) else {
                throw UsageError("invalid value for flag '--labels': label \(name) is the series' own or given twice")
            }
            out.append((name, String(kv[1])))
        }
        return out
    }
}

extension String {
    fileprivate var trimmingSpacesString: String { Substring(self).trimmingSpaces }
}
