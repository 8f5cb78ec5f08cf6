import Glibc
import ReachabilityExporter
import ReachabilityVerdict

// Benchmark driver for bench/scrape_bench.sh.
//
//   reachability-bench serve-synthetic --targets N --listen 127.0.0.1:PORT
//
// Serves a registry shaped like the exporter's with N probe targets (a 24-line RTT histogram
// plus two counters and gauges per target, ~26 series each) through the production HTTP server
// and exposition code, and keeps recording one observation per target per second, as a prober
// at that rate would. It sends no probe traffic at all.

func fail(_ message: String) -> Never {
    _ = message.withCString { writeStderr($0) }
    exit(64)
}

func writeStderr(_ s: UnsafePointer<CChar>) -> Int { write(2, s, strlen(s)) }

var args = Array(CommandLine.arguments.dropFirst())
guard let mode = args.first, mode == "serve-synthetic" || mode == "render-loop" else {
    fail("usage: reachability-bench serve-synthetic|render-loop --targets N --listen ADDR\n")
}
args.removeFirst()
var targets = 1000
var listen = "127.0.0.1:0"
while !args.isEmpty {
    let flag = args.removeFirst()
    guard let value = args.first else { fail("missing value for \(flag)\n") }
    args.removeFirst()
    switch flag {
    case "--targets": targets = Int(value) ?? targets
    case "--listen": listen = value
    default: fail("unknown flag \(flag)\n")
    }
}

let registry = MetricsRegistry()
ProcessMetrics.register(in: registry)
let buckets = Buckets.exponential(start: 0.00005, factor: 2, count: 20)
let duration = registry.histogram(
    "reachability_probe_duration_seconds", help: "Round trip of successful probes.", labels: ["probe", "target"],
    buckets: buckets)
let total = registry.counter("reachability_probes_total", help: "Probe rounds run.", labels: ["probe", "target"])
let success = registry.gauge(
    "reachability_probe_success", help: "Whether the last round succeeded.", labels: ["probe", "target"])
let loss = registry.gauge(
    "reachability_icmp_loss_ratio", help: "Share of echoes lost in the last round.", labels: ["probe", "target"])
struct Series: Sendable {
    let h: Histogram
    let c: Counter
    let s: Gauge
    let l: Gauge
}
let series: [Series] = (0..<targets).map { i in
    let t = "127.0.\(i / 250).\(i % 250 + 1)"
    return Series(
        h: duration.labels("icmp", t), c: total.labels("icmp", t), s: success.labels("icmp", t),
        l: loss.labels("icmp", t))
}

if mode == "render-loop" {
    // In-process render cost alone, without HTTP: 200 renders of the 0.0.4 text.
    for s in series {
        s.h.observe(0.001)
        s.c.inc()
    }
    let clock = ContinuousClock()
    var bytes = 0
    let elapsed = clock.measure { for _ in 0..<200 { bytes = registry.renderNow(.prometheus).count } }
    print("render: \(elapsed / 200) per render, \(bytes) bytes")
    exit(0)
}

let address: ListenAddress
do { address = try ListenAddress.parse(listen) } catch { fail("\(error)\n") }
let routes = WebRoutes(registry: registry)
let server: HTTPServer
do { server = try HTTPServer(listen: address) { await routes.handle($0) } } catch { fail("listen: \(error)\n") }
server.start()
print("listening \(server.boundAddress)")
fflush(nil)

var rng = SystemRandomNumberGenerator()
while true {
    for s in series {
        s.h.observe(Double.random(in: 0.00002...0.002, using: &rng))
        s.c.inc()
        s.s.set(1)
        s.l.set(0)
    }
    sleep(1)
}
