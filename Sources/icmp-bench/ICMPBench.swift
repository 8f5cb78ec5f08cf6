import Glibc
import ReachabilityVerdict
import Synchronization

/// Load generator for the ICMP prober: `--targets N` loopback addresses (127.0.0.1 upwards), each
/// probed once per second with staggered starts (like smokeping_prober), one echo per probe.
/// After `--warmup` seconds it measures for `--seconds` seconds and prints one line:
/// probes, replies, loss, CPU seconds, CPU % of one core and CPU microseconds per probe.
/// Only loopback addresses are accepted, so it cannot send traffic off the machine.
@main
struct ICMPBench {
    struct Options {
        var targets = 100
        var seconds = 15.0
        var warmup = 3.0
        var mode = ICMPSocketMode.raw
        var payload = 56
    }

    static func parse(_ args: [String]) -> Options? {
        var o = Options()
        var i = 0
        while i < args.count {
            let value = i + 1 < args.count ? args[i + 1] : ""
            switch args[i] {
            case "--targets":
                guard let v = Int(value), (1...65_000).contains(v) else { return nil }
                o.targets = v
            case "--seconds":
                guard let v = Double(value), v > 0, v <= 600 else { return nil }
                o.seconds = v
            case "--warmup":
                guard let v = Double(value), v >= 0, v <= 60 else { return nil }
                o.warmup = v
            case "--mode":
                guard let v = ICMPSocketMode(rawValue: value) else { return nil }
                o.mode = v
            case "--payload":
                guard let v = Int(value), (0...1400).contains(v) else { return nil }
                o.payload = v
            default: return nil
            }
            i += 2
        }
        return o
    }

    /// The i-th loopback target (i from 1): 127.0.0.1, …, 127.0.0.255, 127.0.1.0, …
    static func address(_ i: Int) -> String { "127.\((i >> 16) & 255).\((i >> 8) & 255).\(i & 255)" }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(
            usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func main() async {
        guard let o = parse(Array(CommandLine.arguments.dropFirst())) else {
            print(
                "usage: icmp-bench [--targets N] [--seconds S] [--warmup S] [--mode auto|datagram|raw] [--payload BYTES]"
            )
            exit(64)
        }
        let engine = ICMPEngine.shared
        if let error = (Result { () throws(ICMPSocketError) in try engine.socketKind(family: .ipv4, mode: o.mode) })
            .failure
        {
            print("icmp-bench: \(error)")
            exit(1)
        }
        let clock = ContinuousClock()
        let start = clock.now + .milliseconds(200)
        let measureStart = start + .seconds(o.warmup)
        let measureEnd = measureStart + .seconds(o.seconds)
        let tally = Tally()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await Reactor.shared.sleep(until: measureStart)
                let c = cpuSeconds()
                tally.cpu.withLock { $0.0 = c }
                await Reactor.shared.sleep(until: measureEnd)
                let e = cpuSeconds()
                tally.cpu.withLock { $0.1 = e }
            }
            for i in 1...o.targets {
                // RX_BENCH_SLOT_MS > 0: sends go out in batches, one every that many ms.
                let spread = Double(i - 1) / Double(o.targets)
                let slotMS = Double(getenv("RX_BENCH_SLOT_MS").map { String(cString: $0) }.flatMap(Double.init) ?? 0)
                let offset =
                    slotMS > 0
                    ? Duration.milliseconds(Int64((spread * 1000 / slotMS).rounded(.down) * slotMS))
                    : Duration.seconds(1) * spread
                let prober = ICMPProber(
                    .init(host: address(i), family: .ipv4, count: 1, payloadSize: o.payload, mode: o.mode),
                    engine: engine)
                group.addTask {
                    var slot = start + offset
                    while slot < measureEnd {
                        await Reactor.shared.sleep(until: slot)
                        let r = await prober.probe(deadline: slot + .milliseconds(900))
                        if slot >= measureStart {
                            tally.probes.add(1, ordering: .relaxed)
                            if r.succeeded {
                                tally.replies.add(1, ordering: .relaxed)
                            } else {
                                tally.failures.withLock { $0[r.reason?.rawValue ?? "?", default: 0] += 1 }
                            }
                        }
                        slot = slot + .seconds(1)
                    }
                }
            }
        }
        let (c0, c1) = tally.cpu.withLock { $0 }
        let n = tally.probes.load(ordering: .relaxed)
        let ok = tally.replies.load(ordering: .relaxed)
        let cpuUsed = c1 - c0
        let loss = n == 0 ? 0 : Double(n - ok) / Double(n) * 100
        let kind = (try? engine.socketKind(family: .ipv4, mode: o.mode))?.rawValue ?? "?"
        let failureText = tally.failures.withLock {
            $0.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        print(
            "tool=reachability mode=\(kind) targets=\(o.targets) probes=\(n) replies=\(ok) loss_pct=\(fixed(loss, 3)) "
                + "cpu_s=\(fixed(cpuUsed, 3)) cpu_pct=\(fixed(cpuUsed / o.seconds * 100, 2)) "
                + "us_per_probe=\(fixed(n == 0 ? 0 : cpuUsed / Double(n) * 1e6, 1)) failures=\(failureText.isEmpty ? "none" : failureText)"
        )
    }

    static func fixed(_ v: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let r = (v * scale).rounded() / scale
        var s = "\(r)"
        if let dot = s.firstIndex(of: ".") {
            let decimals = s.distance(from: dot, to: s.endIndex) - 1
            if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
        }
        return s
    }
}

/// Counters shared by the probing tasks.
final class Tally: Sendable {
    let probes = Atomic<Int>(0)
    let replies = Atomic<Int>(0)
    let failures = Mutex<[String: Int]>([:])
    let cpu = Mutex<(Double, Double)>((0, 0))
}

extension Result {
    var failure: Failure? { if case .failure(let f) = self { return f } else { return nil } }
}
