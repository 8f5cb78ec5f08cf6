import ReachabilityVerdict

/// `reachability_exporter metrics`: prints every metric the exporter can serve (the
/// `MetricCatalog`): name, type, labels and help, as a table or JSON. Scripts read the JSON
/// instead of searching the sources. Sends no traffic and opens nothing.
enum MetricsCommand {
    static let flags: [FlagSpec] = [
        FlagSpec("output", .value(default: "table"), placeholder: "FORMAT", help: "table or json."),
        FlagSpec("help", .bool(default: false), help: "Show this help and exit."),
    ]

    static func main(_ args: [String]) -> Int32 {
        let parsed: ParsedFlags
        do throws(UsageError) {
            parsed = try FlagParser(flags).parse(args)
            let output = parsed.string("output") ?? "table"
            guard output == "table" || output == "json" else {
                throw UsageError("invalid value \(output.debugDescription) for flag '--output': expected table or json")
            }
        } catch {
            writeErr("reachability_exporter metrics: error: \(error.message), try --help\n")
            return 64
        }
        if parsed.bool("help") {
            writeOut(
                "usage: reachability_exporter metrics [--output=table|json]\n\nLists every metric the exporter serves.\n\nFlags:\n\(FlagParser(flags).helpText())\n"
            )
            return 0
        }
        writeOut(parsed.string("output") == "json" ? json(MetricCatalog.all) : table(MetricCatalog.all))
        return 0
    }

    static func json(_ all: [MetricDescriptor]) -> String {
        let rows = all.map { d in
            "{\"name\":\(Logger.jsonString(d.name)),\"type\":\(Logger.jsonString(d.kind.rawValue)),"
                + "\"labels\":[\(d.labels.map(Logger.jsonString).joined(separator: ","))],\"help\":\(Logger.jsonString(d.help))}"
        }
        return "[\n" + rows.joined(separator: ",\n") + "\n]\n"
    }

    static func table(_ all: [MetricDescriptor]) -> String {
        let width = all.map(\.name.count).max() ?? 0
        return all.map { d in
            let labels = d.labels.isEmpty ? "" : "{\(d.labels.joined(separator: ","))}"
            return d.name.padding(to: width) + "  " + d.kind.rawValue.padding(to: 9) + " " + labels + "  " + d.help
        }.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
