import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Interface classification rules, one row per rule (see `InterfaceClassifier`).
@Suite struct PathClassifierTests {
    typealias Facts = InterfaceClassifier.SysfsFacts

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var kind: String?
        var hardwareType: UInt16
        var sysfs: Facts?
        var expected: InterfaceType
        var testDescription: String { "\(name) kind=\(kind ?? "-") arphrd=\(hardwareType) → \(expected)" }
    }

    static let rows: [Row] = [
        Row(name: "lo", kind: nil, hardwareType: 772, sysfs: Facts(isVirtual: true), expected: .loopback),
        Row(name: "lo", kind: nil, hardwareType: 772, sysfs: nil, expected: .loopback),
        // Hardware Ethernet, with and without sysfs.
        Row(name: "eth0", kind: nil, hardwareType: 1, sysfs: Facts(), expected: .ethernet),
        Row(name: "enp3s0", kind: nil, hardwareType: 1, sysfs: nil, expected: .ethernet),
        // Wi-Fi: sysfs wins; the name is only a fallback without sysfs.
        Row(name: "wlp2s0", kind: nil, hardwareType: 1, sysfs: Facts(isWireless: true), expected: .wifi),
        Row(name: "eth1", kind: nil, hardwareType: 1, sysfs: Facts(isWireless: true), expected: .wifi),
        Row(name: "x0", kind: nil, hardwareType: 1, sysfs: Facts(deviceType: "wlan"), expected: .wifi),
        Row(name: "wlan0", kind: nil, hardwareType: 1, sysfs: nil, expected: .wifi),
        Row(name: "wlan0", kind: nil, hardwareType: 1, sysfs: Facts(), expected: .ethernet),
        Row(name: "mon0", kind: nil, hardwareType: 803, sysfs: nil, expected: .wifi),  // radiotap
        // Cellular.
        Row(name: "wwan0", kind: nil, hardwareType: 1, sysfs: Facts(deviceType: "wwan"), expected: .cellular),
        Row(name: "wwan0", kind: nil, hardwareType: 65534, sysfs: nil, expected: .cellular),
        Row(name: "rmnet0", kind: nil, hardwareType: 519, sysfs: nil, expected: .cellular),  // RAWIP
        Row(name: "mbim0", kind: "wwan", hardwareType: 65534, sysfs: nil, expected: .cellular),
        Row(name: "wwan9", kind: "veth", hardwareType: 1, sysfs: nil, expected: .virtual),  // kind wins over name
        // VPNs and tunnels.
        Row(name: "tun0", kind: "tun", hardwareType: 65534, sysfs: nil, expected: .vpn),
        Row(name: "tap0", kind: "tun", hardwareType: 1, sysfs: nil, expected: .vpn),
        Row(name: "wg0", kind: "wireguard", hardwareType: 65534, sysfs: nil, expected: .vpn),
        Row(name: "ppp0", kind: nil, hardwareType: 512, sysfs: Facts(isVirtual: true), expected: .vpn),
        Row(name: "ipsec0", kind: "xfrm", hardwareType: 65534, sysfs: nil, expected: .vpn),
        Row(name: "vti0", kind: "vti", hardwareType: 768, sysfs: nil, expected: .vpn),
        Row(name: "gre1", kind: "gre", hardwareType: 778, sysfs: nil, expected: .vpn),
        Row(name: "sit0", kind: nil, hardwareType: 776, sysfs: nil, expected: .vpn),
        // Bridges.
        Row(name: "br0", kind: "bridge", hardwareType: 1, sysfs: nil, expected: .bridge),
        Row(name: "br1", kind: nil, hardwareType: 1, sysfs: Facts(deviceType: "bridge"), expected: .bridge),
        // Software devices.
        Row(name: "veth0", kind: "veth", hardwareType: 1, sysfs: nil, expected: .virtual),
        Row(name: "dummy0", kind: "dummy", hardwareType: 1, sysfs: nil, expected: .virtual),
        Row(name: "mv0", kind: "macvlan", hardwareType: 1, sysfs: nil, expected: .virtual),
        Row(name: "eth0.5", kind: "vlan", hardwareType: 1, sysfs: nil, expected: .virtual),
        Row(name: "bond0", kind: "bond", hardwareType: 1, sysfs: nil, expected: .virtual),
        Row(name: "vx0", kind: "VXLAN", hardwareType: 1, sysfs: nil, expected: .virtual),  // case-insensitive
        Row(name: "ifb0", kind: nil, hardwareType: 1, sysfs: Facts(isVirtual: true), expected: .virtual),
        // Fallbacks.
        Row(name: "can0", kind: nil, hardwareType: 280, sysfs: nil, expected: .other),
        Row(name: "odd", kind: "", hardwareType: 65534, sysfs: nil, expected: .other),  // empty kind = none
    ]

    @Test(arguments: rows)
    func classify(_ row: Row) {
        let type = InterfaceClassifier.classify(
            name: row.name, kind: row.kind,
            hardwareType: row.hardwareType, sysfs: row.sysfs)
        #expect(type == row.expected)
    }

    @Test func onlyCellularIsExpensive() {
        #expect(InterfaceType.allCases.filter(\.isExpensive) == [.cellular])
        #expect(
            InterfaceType.allCases.map(\.rawValue)
                == ["wifi", "ethernet", "cellular", "vpn", "loopback", "bridge", "virtual", "other"])
    }

    /// On this machine: `lo` and the first non-loopback link read real sysfs facts; a name
    /// that sysfs knows under another index is refused (the namespace guard).
    @Test func sysfsReaderOnThisHost() {
        let reader = SysfsReader()
        let lo = reader.facts(name: "lo", index: 1)
        #expect(lo != nil)
        #expect(lo?.isVirtual == true && lo?.isWireless == false)
        #expect(reader.facts(name: "lo", index: 4242) == nil)
        #expect(reader.facts(name: "../../etc", index: 1) == nil)
        #expect(reader.facts(name: "no-such-link", index: 1) == nil)
        #expect(SysfsReader(root: "/nonexistent").facts(name: "lo", index: 1) == nil)
    }
}
