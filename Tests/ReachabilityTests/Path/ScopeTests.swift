import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `Scope` is typed from the verdict to the edges; its label is what metrics, history and JSON
/// write, and reads back as the same scope because no uplink may take another scope's name.
@Suite struct ScopeTests {
    @Test func labelsReadBackAsTheSameScope() {
        let scopes: [Scope] = [.overall, .family(.ipv4), .family(.ipv6), .uplink("eth0"), .uplink("wwan0")]
        for scope in scopes { #expect(Scope(label: scope.label) == scope) }
        #expect(scopes.map(\.label) == ["overall", "ipv4", "ipv6", "eth0", "wwan0"])
        #expect(scopes.shuffled().sorted() == scopes, "overall, families, then uplinks by name")
    }

    @Test func anUplinkMayNotTakeAnotherScopesName() throws {
        for name in ["overall", "ipv4", "ipv6"] {
            #expect(Scope.reservedUplinkProblem(name) != nil)
            let flag = try ConfigPrecedenceTests.failure(
                "probes:\n  - type: tcp\n    target: 127.0.0.1:9\n", ["--probe.uplink=\(name)"])
            #expect(flag.hasPrefix("usage:") && flag.contains("reserved"), "\(flag)")
            do {
                _ = try ConfigLoader.parse("uplinks: [\(name)]\n", file: "rx.yml")
                Issue.record("uplinks: [\(name)] was accepted")
            } catch {
                #expect("\(error)".contains("other than overall, ipv4 and ipv6"), "\(error)")
            }
        }
        #expect(Scope.reservedUplinkProblem("eth0") == nil)
        // uplinks: auto leaves such an interface out instead of recording it as a family.
        var auto = MonitorSettings()
        auto.autoUplinks = true
        let gate = SnapshotPathGate(FakePathSource(ConfigReloaderTests.snapshot(["eth0", "ipv4"])))
        #expect(auto.adoptingRouteUplinks(gate).uplinks == ["eth0"])
        #expect(!Reachability.Configuration(probes: [.tcp("127.0.0.1:9")], uplinks: ["ipv6"]).problems.isEmpty)
    }

    /// An uplink's metrics are the uplink's, whatever its name looks like: the recorder switches
    /// on the scope, not on its text.
    @Test func theRecorderWritesEachScopeToItsOwnFamily() {
        let registry = MetricsRegistry()
        let recorder = MetricsRecorder(registry: registry, probes: [], uplinks: ["wan"])
        let full = ScopedVerdict(verdict: Verdict(.full), since: 1)
        recorder.roundCompleted(
            ReachabilityStatus(
                overall: full, families: [.ipv4: full], uplinks: ["wan": full], probes: [], roundStarted: 1,
                roundDuration: .milliseconds(1), transitions: [], round: 1))
        let text = registry.renderString()
        #expect(text.contains("reachability_uplink_internet_reachable{interface=\"wan\"} 1"))
        #expect(text.contains("reachability_family_internet_reachable{family=\"ipv4\"} 1"))
    }
}
