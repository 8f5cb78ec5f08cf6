import ReachabilityVerdict

extension MetricCatalog {
    package static let captivePortalInfo = MetricDescriptor(
        .gauge, "reachability_captive_portal_info",
        labels: ["interface", "source", "api", "user_portal_url", "venue_info_url"],
        help:
            "The captive-portal API the network announced for the interface (RFC 8910: config, dhcp4, dhcp6, networkd or ra) and the URLs its last answer gave (RFC 8908), each at most 512 bytes; always 1, one series per interface."
    )
    package static let captivePortalCaptive = MetricDescriptor(
        .gauge, "reachability_captive_portal_captive", labels: ["interface"],
        help:
            "1 when the network's captive-portal API says it holds this host captive on the interface, 0 when it says not (which proves nothing about the internet); absent without an answer."
    )
    package static let captivePortalSecondsRemaining = MetricDescriptor(
        .gauge, "reachability_captive_portal_seconds_remaining", labels: ["interface"],
        help: "The session time the captive-portal API says is left, counted down since its answer.")
    package static let captivePortalBytesRemaining = MetricDescriptor(
        .gauge, "reachability_captive_portal_bytes_remaining", labels: ["interface"],
        help: "The session data the captive-portal API says is left, as of its answer.")
    package static let captivePortalCanExtendSession = MetricDescriptor(
        .gauge, "reachability_captive_portal_can_extend_session", labels: ["interface"],
        help: "1 when the captive-portal API says the session can be extended at the user portal, else 0.")
    package static let captivePortalAPIErrorsTotal = MetricDescriptor(
        .counter, "reachability_captive_portal_api_errors_total", labels: ["reason"],
        help:
            "Reads of a captive-portal API that gave no answer, by reason (uri, connect, timeout, tls, status, redirect, content_type, too_large, invalid), and hook files ignored because others could have written them (untrusted)."
    )

    static let captivePortalMetrics = [
        captivePortalInfo, captivePortalCaptive, captivePortalSecondsRemaining, captivePortalBytesRemaining,
        captivePortalCanExtendSession, captivePortalAPIErrorsTotal,
    ]
}

/// `reachability_captive_portal_*`: what the network's captive-portal APIs said, one series per
/// interface, replaced each round (a network cannot mint series: the interfaces are the
/// scopes'), the strings it wrote bounded (`CaptivePortalAnswer` refuses control characters;
/// labels cut at 512 bytes).
package struct CaptivePortalMetrics: RoundObserver {
    let info: MetricFamily<Gauge>
    let captive: MetricFamily<Gauge>
    let seconds: MetricFamily<Gauge>
    let bytes: MetricFamily<Gauge>
    let extend: MetricFamily<Gauge>
    let errors: MetricFamily<Counter>

    package init(registry r: MetricsRegistry) {
        info = r.gauge(MetricCatalog.captivePortalInfo)
        captive = r.gauge(MetricCatalog.captivePortalCaptive)
        seconds = r.gauge(MetricCatalog.captivePortalSecondsRemaining)
        bytes = r.gauge(MetricCatalog.captivePortalBytesRemaining)
        extend = r.gauge(MetricCatalog.captivePortalCanExtendSession)
        errors = r.counter(MetricCatalog.captivePortalAPIErrorsTotal)
        for kind in CaptivePortalProblem.Kind.allCases { _ = errors.labels(kind.rawValue) }
    }

    static let labelLimit = 512

    static func capped(_ s: String?) -> String {
        guard let s else { return "" }
        guard s.utf8.count > labelLimit else { return s }
        var out = ""
        for c in s.unicodeScalars {
            guard out.utf8.count + String(c).utf8.count <= labelLimit else { break }
            out.unicodeScalars.append(c)
        }
        return out
    }

    package func roundCompleted(_ status: ReachabilityStatus) {
        let states = Dictionary(status.captivePortals.map { ($0.interface, $0) }, uniquingKeysWith: { a, _ in a })
        info.removeAll { states[$0[0]] == nil || Self.labels(states[$0[0]]!) != $0 }
        for family in [captive, seconds, bytes, extend] { family.removeAll { states[$0[0]]?.answer == nil } }
        for (interface, p) in states {
            info.labels(Self.labels(p)).set(1)
            guard let a = p.answer else { continue }
            captive.labels(interface).set(a.captive)
            if let left = p.secondsRemaining(at: status.roundStarted) {
                seconds.labels(interface).set(left)
            } else {
                seconds.removeAll { $0[0] == interface }
            }
            if let b = a.bytesRemaining {
                bytes.labels(interface).set(b)
            } else {
                bytes.removeAll { $0[0] == interface }
            }
            if let e = a.canExtendSession {
                extend.labels(interface).set(e)
            } else {
                extend.removeAll { $0[0] == interface }
            }
        }
        for (kind, count) in status.captivePortalErrors {
            let series = errors.labels(kind.rawValue)
            let now = series.value
            if Double(count) > now { series.inc(Double(count) - now) }
        }
    }

    static func labels(_ p: CaptivePortalState) -> [String] {
        [
            p.interface, p.source.rawValue, capped(p.api), capped(p.answer?.userPortalURL),
            capped(p.answer?.venueInfoURL),
        ]
    }
}
