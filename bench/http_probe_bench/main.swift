// Hidden benchmark driver for bench/http_bench.sh (not a product, not installed): runs COUNT
// sequential HTTP probes against URL in this process and prints the CPU they cost, read from
// /proc/self/stat (utime + stime, clock ticks) and getrusage (microseconds).
import Glibc
import ReachabilityVerdict

func statTicks() -> Int {
    let fd = open("/proc/self/stat", O_RDONLY)
    guard fd >= 0 else { return -1 }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 1024)
    let n = read(fd, &buffer, buffer.count)
    guard n > 0 else { return -1 }
    let text = String(decoding: buffer[0..<n], as: UTF8.self)
    // Fields after the last ')' start at field 3 (state); utime and stime are fields 14 and 15.
    guard let close = text.lastIndex(of: ")") else { return -1 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let utime = Int(fields[11]), let stime = Int(fields[12]) else { return -1 }
    return utime + stime
}

func rusageMicros() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000
        + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
}

let args = CommandLine.arguments
guard args.count >= 3, let count = Int(args[2]), count > 0 else {
    print("usage: http_probe_bench URL COUNT")
    exit(64)
}
let prober: HTTPProber
do {
    // GET and "2xx/3xx is success", like blackbox_exporter's http_2xx module.
    prober = HTTPProber(try HTTPProbeConfig(url: args[1], method: .get, mode: .web))
} catch {
    print("bad configuration: \(error)")
    exit(78)
}
for _ in 0..<20 { _ = await prober.probe(deadline: .now + .seconds(5)) }  // warm up
let clock = ContinuousClock()
let ticks0 = statTicks()
let micros0 = rusageMicros()
let start = clock.now
var failures = 0
for _ in 0..<count where !(await prober.probe(deadline: .now + .seconds(5))).succeeded {
    failures += 1
}
let wall = start.duration(to: clock.now)
let ticks = statTicks() - ticks0
let micros = rusageMicros() - micros0
print("probes=\(count) failures=\(failures) cpu_ticks=\(ticks) cpu_us=\(micros) wall_ms=\(wall.milliseconds)")
