import Glibc
import Reachability
import ReachabilityTestSupport

// Driver for bench/history_bench.sh.
//
//   history_bench generate DIR [--days N] [--interval SECONDS] [--probes N]
//
// Writes a synthetic history (see HistoryScenario) ending at today's 00:00 UTC, through the
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
    print("scanned rounds=\(rounds) bytes=\(stats.bytes) corrupt=\(stats.corrupt) seconds=\(Double(began.duration(to: clock.now).milliseconds) / 1000)")
    exit(0)
}
guard args.count >= 2, args[0] == "generate" else { fail("usage: history_bench generate DIR [--days N] [--interval S] [--probes N]\n") }
let dir = args[1]
args.removeFirst(2)
var scenario = HistoryScenario()
while !args.isEmpty {
    let flag = args.removeFirst()
    guard let value = args.first else { fail("missing value for \(flag)\n") }
    args.removeFirst()
    switch flag {
    case "--days": scenario.days = Int(value) ?? scenario.days
    case "--interval": scenario.interval = Double(value) ?? scenario.interval
    case "--probes": scenario.probes = Int(value) ?? scenario.probes
    default: fail("unknown flag \(flag)\n")
    }
}
scenario.start = (unixNow() / 86_400).rounded(.down) * 86_400 - Double(scenario.days) * 86_400

let clock = ContinuousClock()
let began = clock.now
let rounds: Int
do { rounds = try scenario.write(to: dir) } catch { fail("generate: \(error)\n") }
let seconds = Double(began.duration(to: clock.now).milliseconds) / 1000
let files = (try? HistoryStore.listFiles(in: dir)) ?? []
let bytes = files.reduce(0) { $0 + $1.size }
let outages = scenario.expectedOutages.count
print("generated rounds=\(rounds) files=\(files.count) bytes=\(bytes) seconds=\(seconds)")
print("expected overall_outages=\(outages) down_seconds=\(Int(scenario.downPerDay) * scenario.days) gap_seconds_per_day=\(scenario.gapPerDay)")
