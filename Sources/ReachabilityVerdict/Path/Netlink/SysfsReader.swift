import Glibc

/// Reads the classifier's facts about one interface from `/sys/class/net/<name>/`.
///
/// sysfs shows the network namespace it was mounted in, not the caller's: a thread that
/// entered another namespace with `setns(2)` would read facts about a different (or no)
/// interface. So a read is accepted only if sysfs's `ifindex` matches the link's index, and
/// the monitor skips sysfs entirely when it watches another namespace. Missing files are
/// normal (down links, namespaces, containers without /sys) and give nil or false facts.
package struct SysfsReader {
    package var root: String = "/sys/class/net"

    /// Facts about `name`, or nil when sysfs does not know this link (by name and index).
    package func facts(name: String, index: Int32) -> InterfaceClassifier.SysfsFacts? {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else { return nil }
        let directory = "\(root)/\(name)"
        guard let text = readSmallFile("\(directory)/ifindex"),
            Int32(text.filter { !$0.isWhitespace }) == index
        else { return nil }
        var facts = InterfaceClassifier.SysfsFacts()
        facts.isWireless = exists("\(directory)/wireless") || exists("\(directory)/phy80211")
        if let uevent = readSmallFile("\(directory)/uevent") {
            for line in uevent.split(separator: "\n") where line.hasPrefix("DEVTYPE=") {
                facts.deviceType = String(line.dropFirst("DEVTYPE=".count))
            }
        }
        facts.isVirtual = linkTarget(directory)?.contains("/devices/virtual/") ?? false
        return facts
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    private func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        let n = readlink(path, &buffer, buffer.count)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Up to 4 KB of a file; nil if it cannot be opened or read (sysfs gives EINVAL for some
    /// attributes of down links).
    private func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }
}
