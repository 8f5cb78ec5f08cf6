/// Maps what the kernel says about a link to an `InterfaceType`. A pure function of its inputs
/// (name, rtnetlink kind, ARPHRD type, optional sysfs facts) so every rule is unit tested.
///
/// Rules, first match wins:
/// 1. `loopback`: ARPHRD_LOOPBACK.
/// 2. `cellular`: sysfs `DEVTYPE=wwan`, kind `wwan`, ARPHRD_RAWIP (qmi/mbim raw-ip modems), or a
///    hardware link (no kind) named `wwan*`. Cellular is the only expensive type.
/// 3. `wifi`: sysfs `wireless/` or `phy80211`, `DEVTYPE=wlan`, an IEEE 802.11 ARPHRD, or — only
///    when sysfs is unavailable — a hardware Ethernet-type link named `wl*`.
/// 4. `vpn`: kinds tun (tun and tap), wireguard, ppp, xfrm/vti/vti6 (IPsec), ipip/sit/ip6tnl/gre/
///    gretap/ip6gre/ip6gretap (IP tunnels), ovpn; without a kind, ARPHRD_PPP or a tunnel ARPHRD.
///    PPPoE DSL links are ppp too and so count as vpn: rtnetlink cannot tell them apart.
/// 5. `bridge`: kind `bridge` or `DEVTYPE=bridge`.
/// 6. `virtual`: any other kind (veth, dummy, macvlan, macvtap, ipvlan, vlan, vxlan, geneve,
///    bond, team, vrf, ifb, openvswitch, netkit…) or a device sysfs places under
///    `/devices/virtual/`. Decision: VLANs and bonds are virtual because their medium is the
///    link below them, which the monitor does not follow; a link with a kind is a software
///    device by construction.
/// 7. `ethernet`: a remaining ARPHRD_ETHER link (hardware, no kind).
/// 8. `other`.
///
/// Inside a network namespace entered with `setns(2)`, sysfs still describes the original
/// namespace, so the monitor passes nil sysfs facts there and the kind/ARPHRD rules decide.
package enum InterfaceClassifier {
    /// Facts from `/sys/class/net/<name>/`; any may be missing.
    package struct SysfsFacts: Sendable, Equatable {
        /// `wireless/` or `phy80211` exists.
        package var isWireless: Bool
        /// `DEVTYPE=` from `uevent` (`wlan`, `wwan`, `bridge`, `vlan`…).
        package var deviceType: String?
        /// The device lives under `/sys/devices/virtual/`.
        package var isVirtual: Bool

        package init(isWireless: Bool = false, deviceType: String? = nil, isVirtual: Bool = false) {
            self.isWireless = isWireless
            self.deviceType = deviceType
            self.isVirtual = isVirtual
        }
    }

    package static let vpnKinds: Set<String> = [
        "tun", "wireguard", "ppp", "xfrm", "vti", "vti6", "ipip", "sit", "ip6tnl", "gre", "gretap",
        "ip6gre", "ip6gretap", "ovpn",
    ]
    package static let tunnelHardwareTypes: Set<UInt16> = [
        RTNL.arphrdTunnel, RTNL.arphrdTunnel6, RTNL.arphrdIPGRE, RTNL.arphrdSIT, RTNL.arphrdIP6GRE,
    ]
    package static let wifiHardwareTypes: Set<UInt16> = [
        RTNL.arphrdIEEE80211, RTNL.arphrdIEEE80211Prism, RTNL.arphrdIEEE80211Radiotap,
    ]

    package static func classify(
        name: String, kind: String?, hardwareType: UInt16,
        sysfs: SysfsFacts?
    ) -> InterfaceType {
        let kind = kind.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        let deviceType = sysfs?.deviceType?.lowercased()
        if hardwareType == RTNL.arphrdLoopback { return .loopback }
        if deviceType == "wwan" || kind == "wwan" || hardwareType == RTNL.arphrdRawIP
            || (kind == nil && name.hasPrefix("wwan"))
        {
            return .cellular
        }
        if sysfs?.isWireless == true || deviceType == "wlan"
            || wifiHardwareTypes.contains(hardwareType)
            || (sysfs == nil && kind == nil && hardwareType == RTNL.arphrdEther && name.hasPrefix("wl"))
        {
            return .wifi
        }
        if let kind {
            if vpnKinds.contains(kind) { return .vpn }
            if kind == "bridge" { return .bridge }
            return .virtual
        }
        if hardwareType == RTNL.arphrdPPP || tunnelHardwareTypes.contains(hardwareType) { return .vpn }
        if deviceType == "bridge" { return .bridge }
        if sysfs?.isVirtual == true { return .virtual }
        if hardwareType == RTNL.arphrdEther { return .ethernet }
        return .other
    }
}
