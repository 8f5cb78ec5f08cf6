import ReachabilityVerdict

/// `--modules.allow-target`: what `/probe` may connect to. Whoever reaches the exporter's port
/// can make it connect anywhere through `/probe` (blackbox_exporter has the same property); on
/// a router that includes its LAN. Entries are address blocks (`192.0.2.0/24`, `2001:db8::/32`,
/// a single address) or host names (`www.example.com`, or `*.example.com` for the names below
/// it). A target passes when its name is listed, or when the address it resolved to (the one
/// the probe connects to) is in a listed block. Empty: every target passes.
package struct TargetAllowList: Sendable, Equatable {
    struct Block: Sendable, Equatable {
        var bytes: [UInt8]
        var bits: Int
    }

    private(set) var blocks: [Block] = []
    private(set) var names: [String] = []
    private(set) var suffixes: [String] = []

    package init() {}

    /// Parses the flag's values; the error says which entry and why.
    package init(_ entries: [String]) throws(Invalid) {
        for entry in entries {
            if entry.hasPrefix("*.") {
                let suffix = String(entry.dropFirst(1)).lowercased()
                guard Resolver.isPlausibleHostName(String(suffix.dropFirst())) else { throw Invalid(entry) }
                suffixes.append(suffix)
            } else if let block = Self.block(entry) {
                blocks.append(block)
            } else if Resolver.isPlausibleHostName(entry), !entry.contains("/") {
                names.append(entry.lowercased())
            } else {
                throw Invalid(entry)
            }
        }
    }

    package struct Invalid: Error, Equatable {
        package let message: String
        init(_ entry: String) {
            message =
                "invalid value \(entry.debugDescription) for flag '--modules.allow-target': "
                + "an address block (192.0.2.0/24, 2001:db8::/32, an address) or a host name (www.example.com, *.example.com)"
        }
    }

    package var isEmpty: Bool { blocks.isEmpty && names.isEmpty && suffixes.isEmpty }

    /// Whether a target named `name` (nil for an address) that resolved to `address` may be probed.
    package func allows(name: String?, address: SocketAddress?) -> Bool {
        if isEmpty { return true }
        if let name = name?.lowercased() {
            if names.contains(name) || suffixes.contains(where: { name.hasSuffix($0) && name.count > $0.count }) {
                return true
            }
        }
        guard let address else { return false }
        let bytes = Self.unmapped(address.addressBytes)
        return blocks.contains { Self.contains($0, bytes) }
    }

    private static func block(_ text: String) -> Block? {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = SocketAddress(ip: String(parts[0])) else { return nil }
        let bytes = unmapped(address.addressBytes)
        let width = bytes.count * 8
        guard parts.count == 2 else { return Block(bytes: bytes, bits: width) }
        guard let bits = Int(parts[1]), (0...width).contains(bits), parts[1].allSatisfy(\.isNumber) else { return nil }
        return Block(bytes: bytes, bits: bits)
    }

    /// An IPv4-mapped IPv6 address as its IPv4 address.
    private static func unmapped(_ bytes: [UInt8]) -> [UInt8] {
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return Array(bytes[12...])
        }
        return bytes
    }

    private static func contains(_ block: Block, _ bytes: [UInt8]) -> Bool {
        guard block.bytes.count == bytes.count else { return false }
        var left = block.bits
        for i in 0..<bytes.count where left > 0 {
            let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
            if block.bytes[i] & mask != bytes[i] & mask { return false }
            left -= 8
        }
        return true
    }
}
