import Glibc
import ReachabilityExporter
import ReachabilityVerdict

/// A synthetic history with a known answer, for the report tests and bench/history_bench.sh:
/// `days` UTC days of rounds every `interval` seconds, a `limited (timeout)` outage of
/// `outageLength` seconds at `outageOffset` into every `outagePeriod`, and every day a gap
/// (a stop record, no rounds, a start record) of `gapLength` seconds at `gapOffset` into the
/// day. Each round lasts `roundDuration`, so its verdict holds from `time + roundDuration`.
/// Files are written through `HistoryStore`, so rotation (daily and by size) is the real one.
package struct HistoryScenario: Sendable {
    package var start: Double = 1_767_225_600  // 2026-01-01T00:00:00Z
    package var days = 30
    package var interval: Double = 1
    package var roundDuration = 0.05
    package var outagePeriod: Double = 6 * 3600
    package var outageOffset: Double = 3600
    package var outageLength: Double = 300
    package var gapOffset: Double = 12 * 3600
    package var gapLength: Double = 600
    /// Probe results per round record (each adds ~100 bytes, like a real probe).
    package var probes = 2
    /// Successful probes' durations follow a slow wave (20–40 ms) instead of a constant 23.456 ms,
    /// so RTT charts have something to draw.
    package var rttWave = false
    /// How long after its last round the stop record is written.
    package static let stopDelay = 0.5

    package init() {}

    package var end: Double { start + Double(days) * 86_400 }

    /// The outages the report must find (all overall, limited/timeout, recovered).
    package var expectedOutages: [(start: Double, end: Double)] {
        var out: [(Double, Double)] = []
        var t = start
        while t < end {
            out.append((t + outageOffset + roundDuration, t + outageOffset + outageLength + roundDuration))
            t += outagePeriod
        }
        return out
    }

    /// Uncovered seconds per full day: the stop comes `stopDelay` after the last round's verdict,
    /// and coverage resumes with the first round after the gap.
    package var gapPerDay: Double { gapLength + interval - Self.stopDelay }
    package var downPerDay: Double { 86_400 / outagePeriod * outageLength }

    private func verdict(at t: Double) -> Verdict {
        let phase = (t - start).truncatingRemainder(dividingBy: outagePeriod)
        return phase >= outageOffset && phase < outageOffset + outageLength
            ? Verdict(.limited, reason: .probe(.timeout)) : Verdict(.full)
    }

    private func inGap(_ t: Double) -> Bool {
        let phase = (t - start).truncatingRemainder(dividingBy: 86_400)
        return phase >= gapOffset && phase < gapOffset + gapLength
    }

    private func wave(_ records: [ProbeRecord], at t: Double) -> [ProbeRecord] {
        guard rttWave else { return records }
        return records.enumerated().map { i, p in
            var r = p
            let phase = (t - start) / 21_600 * 2 * Double.pi + Double(i)
            r.duration = 0.030 + 0.010 * sin(phase) + 0.004 * sin(t * 7.3 + Double(i))
            return r
        }
    }

    /// Writes the history into `directory`; returns the number of round records.
    @discardableResult
    package func write(to directory: String, maxFileSize: Int = 64 << 20) throws -> Int {
        var config = HistoryConfig(directory: directory)
        config.maxFileSize = maxFileSize
        config.maxTotalSize = Int.max / 2
        config.retention = .seconds(3650 * 86_400)
        var store = HistoryStore(config: config)
        _ = try store.open(now: start)
        let probeRecords = (0..<probes).map { i in
            ProbeRecord(
                name: "https://probe-\(i).example.net/generate_204", type: .https, status: .success, duration: 0.023456,
                address: "192.0.2.\(i + 1)")
        }
        let failing = probeRecords.map { p -> ProbeRecord in
            var f = p
            f.status = .failure
            f.reason = .timeout
            f.duration = 3
            f.detail = "no answer within 3s"
            return f
        }
        func put(_ r: HistoryRecord, _ now: Double) throws { try store.append(r.encoded(), now: now) }
        try put(.start(StartRecord(time: start, interval: interval, version: "bench", pid: 1)), start)
        var previous = Verdict.unknown
        var since = start
        var rounds = 0
        var wasInGap = false
        let count = Int(((end - start) / interval).rounded())
        for n in 0..<count {
            let t = start + Double(n) * interval
            if inGap(t) {
                if !wasInGap { try put(.stop(StopRecord(time: t - interval + roundDuration + Self.stopDelay)), t) }
                wasInGap = true
                continue
            }
            if wasInGap { try put(.start(StartRecord(time: t, interval: interval, version: "bench", pid: 1)), t) }
            wasInGap = false
            let v = verdict(at: t)
            let at = t + roundDuration
            if v != previous {
                try put(.transition(TransitionRecord(time: at, scope: .overall, from: previous, to: v)), at)
                since = at
                previous = v
            }
            rounds += 1
            let record = RoundRecord(
                time: t, duration: roundDuration, interval: interval, round: rounds, overall: v, since: since,
                families: [
                    Scope.family(.ipv4).label: v,
                    Scope.family(.ipv6).label: Verdict(.none, reason: .path(.noDefaultRoute)),
                ],
                probes: v.state == .full ? wave(probeRecords, at: t) : failing)
            try put(.round(record), at)
        }
        store.close()
        return rounds
    }
}
