import Glibc

/// The current process's figures, read from /proc (and getrlimit, sysconf).
package struct ProcessSample: Sendable {
    package var cpuSeconds: Double
    package var residentBytes: Double
    package var virtualBytes: Double
    package var startTime: Double
    package var threads: Double
    package var openFDs: Int
    package var maxFDs: Double

    /// Reads the current process's figures; nil if /proc is not mounted.
    package static func read() -> ProcessSample? {
        guard let stat = readSmallFile("/proc/self/stat"), let fields = parseStat(stat) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let page = Double(sysconf(Int32(_SC_PAGESIZE)))
        var limit = rlimit()
        getrlimit(rlimitNoFile, &limit)
        return ProcessSample(
            cpuSeconds: (fields.utime + fields.stime) / ticks,
            residentBytes: fields.rssPages * page,
            virtualBytes: fields.vsize,
            startTime: bootTime() + fields.startTicks / ticks,
            threads: fields.threads,
            openFDs: countOpenFDs(),
            maxFDs: limit.rlim_cur == __rlim_t.max ? .infinity : Double(limit.rlim_cur))
    }

    package struct StatFields { var utime, stime, threads, startTicks, vsize, rssPages: Double }

    /// Parses /proc/PID/stat. The command name (field 2) may contain spaces and parentheses,
    /// so fields are counted from the last `)`.
    package static func parseStat(_ text: String) -> StatFields? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let rest = text[text.index(after: close)...].split(separator: " ")
        // rest[0] is field 3 (state); field N is rest[N - 3].
        func field(_ n: Int) -> Double? { rest.count > n - 3 ? Double(rest[n - 3]) : nil }
        guard let utime = field(14), let stime = field(15), let threads = field(20),
            let start = field(22), let vsize = field(23), let rss = field(24)
        else { return nil }
        return StatFields(utime: utime, stime: stime, threads: threads, startTicks: start, vsize: vsize, rssPages: rss)
    }

    private static func bootTime() -> Double {
        guard let stat = readSmallFile("/proc/stat") else { return 0 }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6)) ?? 0
        }
        return 0
    }

    private static func countOpenFDs() -> Int {
        guard let dir = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(dir) }
        var n = 0
        while let entry = readdir(dir) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { n += 1 }
        }
        return max(0, n - 1)  // minus the directory stream's own descriptor
    }
}

private let rlimitNoFile = __rlimit_resource_t(7)

/// Reads a whole small file (procfs, sysfs) with plain syscalls; nil if it cannot be read.
package func readSmallFile(_ path: String, limit: Int = 1 << 20) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 8192)
    while out.count < limit {
        let n = read(fd, &buf, buf.count)
        if n < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if n == 0 { break }
        out.append(contentsOf: buf[0..<n])
    }
    return String(decoding: out, as: UTF8.self)
}
