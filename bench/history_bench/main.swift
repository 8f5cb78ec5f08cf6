import Glibc
import ReachabilityExporter
import ReachabilityTestSupport
import ReachabilityVerdict

// Driver for bench/history_bench.sh.
//
//   history_bench generate DIR [--days N] [--interval SECONDS] [--probes N] [--until-now]
//
// Writes a synthetic history (see HistoryScenario) ending at today's 00:00 UTC (with
// --until-now: ending now, with varying RTTs, for scripts/lab status-page), through the
// real HistoryStore (daily and 64 MiB rotation), and prints what the report must find.

func fail(_ message: String) -> Never {
    _ = message.withCString { write(2, $0, strlen($0)) }
    exit(64)
}

var args = Array(CommandLine.arguments.dropFirst())
if args.count == 2, args[0] == "scan" {
    // Decoding alone (no report), for profiling the fast path.
    let clock = ContinuousClock()
    let began = clock.now
    var rounds = 0
    let stats = try HistoryReader.read(directory: args[1]) { if case .round = $0 { rounds += 1 } }
    print(
        "scanned rounds=\(rounds) bytes=\(stats.bytes) corrupt=\(stats.corrupt) seconds=\(Double(began.duration(to: clock.now).milliseconds) / 1000)"
    )
    exit(0)
}
if args.count == 3, args[0] == "decode" {
    // The fast path alone on one file held in memory, single-threaded: thread CPU time per
    // line, best of N passes (stable on a shared machine, unlike wall time).
    var fileBytes: [UInt8] = []
    _ = HistoryReader.read(paths: [args[1]], threads: 1) { _ in }
    let fd = open(args[1], O_RDONLY)
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
        let n = read(fd, &chunk, chunk.count)
        if n <= 0 { break }
        fileBytes += chunk[0..<n]
    }
    close(fd)
    var best = Double.infinity
    var lines = 0
    var scanner = HistoryLineScanner()
    for _ in 0..<(Int(args[2]) ?? 3) {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        let t0 = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        lines = 0
        fileBytes.withUnsafeBufferPointer { all in
            var start = 0
            for i in 0..<all.count where all[i] == 0x0A {
                _ = try? scanner.scan(UnsafeBufferPointer(rebasing: all[start..<i]))
                lines += 1
                start = i + 1
            }
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        best = min(best, Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 - t0)
    }
    print(
        "decoded lines=\(lines) bytes=\(fileBytes.count) best_cpu_seconds=\(best) ns_per_line=\(Int(best / Double(lines) * 1e9)) MB_per_s=\(Int(Double(fileBytes.count) / best / 1e6))"
    )
    exit(0)
}
guard args.count >= 2, args[0] == "generate" else {
    fail("usage: history_bench generate DIR [--days N] [--interval S] [--probes N]\n")
}
let dir = args[1]
args.removeFirst(2)
var scenario = HistoryScenario()
var untilNow = false
while !args.isEmpty {
    let flag = args.removeFirst()
    if flag == "--until-now" {
        untilNow = true
        scenario.rttWave = true
        continue
    }
    guard let value = args.first else { fail("missing value for \(flag)\n") }
    args.removeFirst()
    switch flag {
    case "--days": scenario.days = Int(value) ?? scenario.days
    case "--interval": scenario.interval = Double(value) ?? scenario.interval
    case "--probes": scenario.probes = Int(value) ?? scenario.probes
    default: fail("unknown flag \(flag)\n")
    }
}
scenario.start =
    (untilNow
        ? (unixNow() / scenario.interval).rounded(.down) * scenario.interval
        : (unixNow() / 86_400).rounded(.down) * 86_400)
    - Double(scenario.days) * 86_400

let clock = ContinuousClock()
let began = clock.now
let rounds: Int
do { rounds = try scenario.write(to: dir) } catch { fail("generate: \(error)\n") }
let seconds = Double(began.duration(to: clock.now).milliseconds) / 1000
let files = (try? HistoryStore.listFiles(in: dir)) ?? []
let bytes = files.reduce(0) { $0 + $1.size }
let outages = scenario.expectedOutages.count
print("generated rounds=\(rounds) files=\(files.count) bytes=\(bytes) seconds=\(seconds)")
print(
    "expected overall_outages=\(outages) down_seconds=\(Int(scenario.downPerDay) * scenario.days) gap_seconds_per_day=\(scenario.gapPerDay)"
)
