import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// `history export --format=openmetrics` on a generated day with a known answer.
@Suite struct HistoryExportTests {
    static func exportText(_ s: HistoryScenario, step: Double = 60, labels: [(String, String)] = [("job", "rx")])
        throws -> String
    {
        let dir = ScratchDirectory()
        try s.write(to: dir.path)
        let export = try HistoryExport.build(directory: dir.path, since: .seconds(Int64(s.end - s.start)), now: s.end)
        var text = ""
        export.renderOpenMetrics(step: step, labels: labels) { text += $0 }
        return text
    }

    /// Samples of one series: timestamp → value.
    static func samples(_ text: String, _ series: String) -> [Double: Double] {
        var out: [Double: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            let parts = line.split(separator: " ")
            out[Double(parts[2])!] = Double(parts[1])!
        }
        return out
    }

    @Test func outagesGapsAndStatesComeBackAtTheirTimes() throws {
        var s = HistoryScenario.small
        s.days = 1
        let text = try Self.exportText(s)
        #expect(text.hasSuffix("# EOF\n"))
        let reachable = Self.samples(text, "reachability_internet_reachable{job=\"rx\"}")
        let t0 = s.start
        // The first outage: limited from t0+3600.05 to t0+3900.05.
        #expect(reachable[t0 + 3600] == 1)
        #expect(reachable[t0 + 3660] == 0 && reachable[t0 + 3900] == 0)
        #expect(reachable[t0 + 3960] == 1)
        // The daily gap (a stop, 600 s without rounds, a start): no samples, as a missed scrape.
        #expect(reachable[t0 + 43_200 + 300] == nil)
        #expect(reachable[t0 + 43_200 + 900] == 1)
        let outages = reachable.values.filter { $0 == 0 }.count
        #expect(outages == 4 * 5, "four 300 s outages at a 60 s step: \(outages)")
        let limited = Self.samples(text, "reachability_connectivity_state{job=\"rx\",state=\"limited\"}")
        #expect(limited[t0 + 3660] == 1 && limited[t0 + 3600] == 0)
        let info = Self.samples(
            text, "reachability_connectivity_info{job=\"rx\",scope=\"overall\",state=\"limited\",reason=\"timeout\"}")
        #expect(info.count == 20 && info[t0 + 3660] == 1)
        // IPv6 never had a route in the scenario.
        let v6 = Self.samples(text, "reachability_family_internet_reachable{job=\"rx\",family=\"ipv6\"}")
        #expect(!v6.isEmpty && v6.values.allSatisfy { $0 == 0 })
        // Every family is contiguous and typed once.
        let types = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
        #expect(Set(types).count == types.count)
        var seen: [String] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let family = String(line.prefix { $0 != "{" && $0 != " " })
            if seen.last != family {
                #expect(!seen.contains(family), "\(family) is not contiguous")
                seen.append(family)
            }
        }
    }

    @Test func transitionsCountFromTheWindowStart() throws {
        var s = HistoryScenario.small
        s.days = 1
        let text = try Self.exportText(s, step: 600)
        let down = Self.samples(text, "reachability_state_transitions_total{job=\"rx\",from=\"full\",to=\"limited\"}")
        let times = down.keys.sorted()
        #expect(!times.isEmpty)
        #expect(down[times.last!] == 4, "four outages in the day")
        #expect(zip(times, times.dropFirst()).allSatisfy { down[$0.0]! <= down[$0.1]! }, "a counter never decreases")
    }

    @Test func flagsAreChecked() {
        #expect(HistoryExportCommand.main(["--history.dir=/nonexistent", "--step=0s"]) == 64)
        #expect(HistoryExportCommand.main(["--history.dir=/nonexistent", "--format=json"]) == 64)
        #expect(HistoryExportCommand.main(["--history.dir=/nonexistent", "--labels=state=x"]) == 64)
        #expect(HistoryExportCommand.main(["--history.dir=/nonexistent", "--labels=1x=y"]) == 64)
        #expect(throws: Never.self) { try HistoryExportCommand.parseLabels("job=a,instance=h:1,site=") }
        #expect(HistoryExport.timestamp(1_767_225_600) == "1767225600")
        #expect(HistoryExport.timestamp(1_767_225_600.25) == "1767225600.25")
    }
}
