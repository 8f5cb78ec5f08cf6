import ReachabilityVerdict

/// The exposition formats the exporter serves.
package enum ExpositionFormat: Sendable {
    /// Prometheus text format 0.0.4.
    case prometheus
    /// OpenMetrics 1.0.0 text.
    case openMetrics
    /// The delimited protobuf format (`io.prometheus.client.MetricFamily`): the only one that
    /// carries native histograms; Prometheus asks for it when its native-histogram feature is on.
    case protobuf

    package var contentType: String {
        switch self {
        case .prometheus: "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8"
        case .protobuf: "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
        }
    }

    /// Picks the format from an `Accept` header: the media range with the highest `q` that names
    /// a format served here wins, the earlier one on a tie; `*/*`, `text/*`, no header or nothing
    /// recognised mean text 0.0.4. (Prometheus sends distinct `q` values, so the tie rule only
    /// matters to hand-written headers.)
    package static func negotiate(accept: String?) -> ExpositionFormat {
        guard let accept else { return .prometheus }
        var best: (format: ExpositionFormat, q: Double)? = nil
        for part in accept.split(separator: ",") {
            let fields = part.split(separator: ";").map { $0.trimmingSpaces.lowercased() }
            guard let media = fields.first else { continue }
            var params: [String: String] = [:]
            for param in fields.dropFirst() {
                let kv = param.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
                if kv.count == 2 { params[kv[0]] = kv[1] }
            }
            let q = params["q"].map { Double($0) ?? 0 } ?? 1
            guard q > 0, let format = format(media: media, params: params) else { continue }
            if best == nil || q > best!.q { best = (format, q) }
        }
        return best?.format ?? .prometheus
    }

    private static func format(media: String, params: [String: String]) -> ExpositionFormat? {
        switch media {
        case "application/vnd.google.protobuf":
            guard params["proto"] == "io.prometheus.client.metricfamily", params["encoding"] == "delimited" else {
                return nil
            }
            return .protobuf
        case "application/openmetrics-text":
            guard let version = params["version"] else { return .openMetrics }
            return version.hasPrefix("1.0") || version == "0.0.1" ? .openMetrics : nil
        case "text/plain":
            guard let version = params["version"] else { return .prometheus }
            return version == "0.0.4" ? .prometheus : nil
        case "*/*", "text/*": return .prometheus
        default: return nil
        }
    }
}
