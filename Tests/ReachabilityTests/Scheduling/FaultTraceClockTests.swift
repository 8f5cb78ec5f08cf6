import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The fault checks keep time on the monitor's clock: a route's trace stands for
/// `traceInterval` of that clock while its scope stays limited, then is made afresh.
@Suite struct FaultTraceClockTests {
    @Test func aTraceStandsForTheIntervalOfTheMonitorsClock() async {
        let clock = ManualClock()
        // An echo probe that fails out there, deciding at once: limited, its route checked and traced.
        let prober = ScriptedProber(type: .icmp, clock: clock)
        prober.set(
            ProbeResult(
                status: .failure, reason: .timeout, detail: "no reply", duration: .milliseconds(1),
                address: "198.51.100.1", family: .ipv4))
        var settings = MonitorSettings()
        settings.verdict = VerdictSettings(failAfter: 1, recoverAfter: 1)
        let spec = ProbeSpec(name: "far", type: .icmp, target: "198.51.100.1", family: .ipv4) { _ in prober }
        let gateways = FaultLocatorTests.FakeGateways { GatewayCheck(route: $0, echo: .reply(.microseconds(300))) }
        let monitor = ReachabilityMonitor(
            probes: [spec], settings: settings, path: SnapshotPathGate(FakePathSource()), clock: clock,
            gateways: gateways)
        var traced: Int { gateways.traced.withLock { $0.count } }
        #expect(await monitor.check().fault?.location == .upstream)
        #expect(traced == 1)
        clock.advance(by: ReachabilityMonitor<ManualClock>.traceInterval - .seconds(1))
        _ = await monitor.check()
        #expect(traced == 1, "the trace stands within the interval")
        clock.advance(by: .seconds(1))
        _ = await monitor.check()
        #expect(traced == 2, "an interval later on the monitor's clock, the route is traced again")
    }
}
