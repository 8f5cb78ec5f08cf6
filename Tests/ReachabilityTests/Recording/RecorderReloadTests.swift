import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The metrics recorder across reloads: removed probes' and uplinks' series disappear, new
/// ones are pre-created, unchanged ones keep their values; and the config metrics.
@Suite struct RecorderReloadTests {
    static func spec(_ name: String, _ type: ProbeType = .tcp, target: String? = nil) -> ProbeSpec {
        ProbeSpec(name: name, type: type, target: target ?? name) { _ in
            ScriptedProber(type: type, clock: ContinuousClock())
        }
    }

    static func settings(uplinks: [String]) -> MonitorSettings {
        var s = MonitorSettings()
        s.uplinks = uplinks
        return s
    }

    static func round(_ names: [(String, String?)]) -> ReachabilityStatus {
        let full = ScopedVerdict(verdict: Verdict(.full), since: 1)
        return ReachabilityStatus(
            overall: full, families: [:], uplinks: [:],
            probes: names.map {
                ProbeOutcome(
                    name: $0.0, type: .tcp, target: $0.0, interface: $0.1,
                    result: ProbeResult(status: .success, duration: .milliseconds(2)), at: 10)
            },
            roundStarted: 10, roundDuration: .milliseconds(5), transitions: [], round: 1)
    }

    static func lines(_ registry: MetricsRegistry, _ prefix: String) -> [String] {
        registry.renderString().split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }

    @Test func seriesFollowTheProbesAndUplinks() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(registry: registry, probes: [Self.spec("a"), Self.spec("b")], uplinks: ["wan0"])
        recorder.roundCompleted(Self.round([("a", nil), ("b", nil), ("a", "wan0"), ("b", "wan0")]))
        #expect(
            Self.lines(registry, "reachability_probes_total{") == [
                "reachability_probes_total{probe=\"tcp\",target=\"a\"} 1",
                "reachability_probes_total{probe=\"tcp\",target=\"a@wan0\"} 1",
                "reachability_probes_total{probe=\"tcp\",target=\"b\"} 1",
                "reachability_probes_total{probe=\"tcp\",target=\"b@wan0\"} 1",
            ])
        // a removed, b kept, c added, a's uplink wan0 replaced by wan1.
        recorder.probesChanged([Self.spec("b"), Self.spec("c", .dns)], settings: Self.settings(uplinks: ["wan1"]))
        #expect(
            Self.lines(registry, "reachability_probes_total{") == [
                "reachability_probes_total{probe=\"dns\",target=\"c\"} 0",
                "reachability_probes_total{probe=\"dns\",target=\"c@wan1\"} 0",
                "reachability_probes_total{probe=\"tcp\",target=\"b\"} 1",
                "reachability_probes_total{probe=\"tcp\",target=\"b@wan1\"} 0",
            ])
        #expect(Self.lines(registry, "reachability_probe_info{").count == 4)
        #expect(
            Self.lines(registry, "reachability_probe_duration_seconds_count{") == [
                "reachability_probe_duration_seconds_count{probe=\"dns\",target=\"c\"} 0",
                "reachability_probe_duration_seconds_count{probe=\"dns\",target=\"c@wan1\"} 0",
                "reachability_probe_duration_seconds_count{probe=\"tcp\",target=\"b\"} 1",
                "reachability_probe_duration_seconds_count{probe=\"tcp\",target=\"b@wan1\"} 0",
            ])
        #expect(
            Self.lines(registry, "reachability_uplink_connectivity_state{").allSatisfy {
                $0.contains("interface=\"wan1\"")
            })
        #expect(
            Self.lines(registry, "reachability_uplink_connectivity_state{interface=\"wan1\",state=\"unknown\"} 1").count
                == 1)
        #expect(!registry.renderString().contains("wan0"))
    }

    /// Found by a hostile review: a new reason in the same state counted as limited -> limited.
    @Test func stateTransitionsCountStateChangesOnly() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(registry: registry, probes: [], uplinks: [])
        func round(_ from: Verdict, _ to: Verdict) -> ReachabilityStatus {
            status(
                at: 10, to, since: 10, transitions: [ScopeTransition(.overall, Transition(from: from, to: to, at: 10))])
        }
        recorder.roundCompleted(round(Verdict(.full), Verdict(.limited, reason: .probe(.dns))))
        recorder.roundCompleted(
            round(Verdict(.limited, reason: .probe(.dns)), Verdict(.limited, reason: .probe(.timeout))))
        let text = registry.renderString()
        #expect(text.contains("reachability_state_transitions_total{from=\"full\",to=\"limited\"} 1"))
        #expect(!text.contains("from=\"limited\",to=\"limited\""))
    }

    @Test func aProbeWhoseTargetChangedStartsAfresh() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(registry: registry, probes: [Self.spec("a", target: "127.0.0.1:9")], uplinks: [])
        recorder.roundCompleted(Self.round([("a", nil)]))
        recorder.probesChanged([Self.spec("a", target: "127.0.0.1:10")], settings: Self.settings(uplinks: []))
        #expect(
            Self.lines(registry, "reachability_probes_total{") == [
                "reachability_probes_total{probe=\"tcp\",target=\"a\"} 0"
            ])
        #expect(
            Self.lines(registry, "reachability_probe_info{") == [
                "reachability_probe_info{probe=\"tcp\",target=\"a\",destination=\"127.0.0.1:10\",interface=\"\"} 1"
            ])
    }

    /// Names may contain '@' (`name@server` DNS flags): forgetting one must not touch another.
    @Test func forgettingMatchesWholeTargetLabels() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(
            registry: registry, probes: [Self.spec("example.test"), Self.spec("example.test@127.0.0.1")], uplinks: [])
        recorder.forget(probeNames: ["example.test"])
        #expect(
            Self.lines(registry, "reachability_probes_total{") == [
                "reachability_probes_total{probe=\"tcp\",target=\"example.test@127.0.0.1\"} 0"
            ])
        recorder.forget(probeNames: ["example.test@127.0.0.1"])
        #expect(Self.lines(registry, "reachability_probes_total{").isEmpty)
    }

    static func labelled(_ name: String, _ labels: [ProbeLabel]) -> ProbeSpec {
        var spec = ProbeSpec(name: name, type: .tcp, target: name) { _ in UnusableProber(type: .tcp, problem: "x") }
        spec.labels = labels
        return spec
    }

    @Test func probeLabelsInfoIsAJoinableInfoMetric() {
        let registry = MetricsRegistry()
        let metrics = ProbeLabelsMetric(registry: registry)
        metrics.set(
            [Self.labelled("a", [ProbeLabel("site", "home")]), Self.labelled("b", [ProbeLabel("tier", "1")])],
            uplinks: ["wan0"])
        #expect(
            Self.lines(registry, "reachability_probe_labels_info") == [
                "reachability_probe_labels_info{target=\"a\",site=\"home\",tier=\"\"} 1",
                "reachability_probe_labels_info{target=\"a@wan0\",site=\"home\",tier=\"\"} 1",
                "reachability_probe_labels_info{target=\"b\",site=\"\",tier=\"1\"} 1",
                "reachability_probe_labels_info{target=\"b@wan0\",site=\"\",tier=\"1\"} 1",
            ])
        // New label names: the family is registered again with them.
        metrics.set([Self.labelled("b", [ProbeLabel("zone", "x")])], uplinks: [])
        #expect(
            Self.lines(registry, "reachability_probe_labels_info") == [
                "reachability_probe_labels_info{target=\"b\",zone=\"x\"} 1"
            ])
        metrics.set([Self.labelled("b", [])], uplinks: [])
        #expect(!registry.renderString().contains("reachability_probe_labels_info"))
    }

    /// The recorder publishes the labels of the probes it is given, on every uplink they run on.
    @Test func theRecorderPublishesTheProbesLabels() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(
            registry: registry, probes: [Self.labelled("a", [ProbeLabel("site", "home")])], uplinks: [])
        #expect(Self.lines(registry, "reachability_probe_labels_info").count == 1)
        var settings = MonitorSettings()
        settings.uplinks = ["wan0"]
        recorder.probesChanged([Self.labelled("a", [ProbeLabel("site", "home")])], settings: settings)
        #expect(Self.lines(registry, "reachability_probe_labels_info").count == 2)
    }
}
