import CShim

/// The rtnetlink numbers the path monitor uses, converted once from the kernel headers (CShim)
/// into the widths the wire format has. Keeping the conversions here keeps the decoder readable.
package enum RTNL {
    // nlmsghdr
    package static let headerSize = MemoryLayout<nlmsghdr>.size  // 16
    package static let messageDone = UInt16(NLMSG_DONE)
    package static let messageError = UInt16(NLMSG_ERROR)
    package static let messageOverrun = UInt16(NLMSG_OVERRUN)
    package static let flagRequest = UInt16(NLM_F_REQUEST)
    package static let flagDump = UInt16(NLM_F_DUMP)
    package static let flagDumpInterrupted = UInt16(NLM_F_DUMP_INTR)
    package static let flagReplace = UInt16(NLM_F_REPLACE)

    // message types
    package static let newLink = UInt16(RTM_NEWLINK)
    package static let delLink = UInt16(RTM_DELLINK)
    package static let getLink = UInt16(RTM_GETLINK)
    package static let newAddress = UInt16(RTM_NEWADDR)
    package static let delAddress = UInt16(RTM_DELADDR)
    package static let getAddress = UInt16(RTM_GETADDR)
    package static let newRoute = UInt16(RTM_NEWROUTE)
    package static let delRoute = UInt16(RTM_DELROUTE)
    /// An RA option the kernel does not process itself (captive portal, PREF64, RDNSS…).
    package static let newNDUserOption = UInt16(RTM_NEWNDUSEROPT)
    package static let getRoute = UInt16(RTM_GETROUTE)

    // fixed bodies
    package static let ifinfomsgSize = MemoryLayout<ifinfomsg>.size  // 16
    package static let ifaddrmsgSize = MemoryLayout<ifaddrmsg>.size  // 8
    package static let rtmsgSize = MemoryLayout<rtmsg>.size  // 12
    package static let rtnexthopSize = MemoryLayout<rtnexthop>.size  // 8

    // link attributes
    package static let iflaName = UInt16(IFLA_IFNAME)
    package static let iflaMTU = UInt16(IFLA_MTU)
    package static let iflaOperState = UInt16(IFLA_OPERSTATE)
    package static let iflaLinkInfo = UInt16(IFLA_LINKINFO)
    package static let iflaInfoKind = UInt16(IFLA_INFO_KIND)

    // address attributes
    package static let ifaAddress = UInt16(IFA_ADDRESS)
    package static let ifaLocal = UInt16(IFA_LOCAL)
    package static let ifaFlags = UInt16(IFA_FLAGS)
    package static let ifaFlagTentative = UInt32(IFA_F_TENTATIVE)
    package static let ifaFlagDeprecated = UInt32(IFA_F_DEPRECATED)
    package static let ifaFlagDADFailed = UInt32(IFA_F_DADFAILED)

    // route attributes
    package static let rtaDestination = UInt16(RTA_DST.rawValue)
    package static let rtaOutputInterface = UInt16(RTA_OIF.rawValue)
    package static let rtaGateway = UInt16(RTA_GATEWAY.rawValue)
    package static let rtaPriority = UInt16(RTA_PRIORITY.rawValue)
    package static let rtaMultipath = UInt16(RTA_MULTIPATH.rawValue)
    package static let rtaTable = UInt16(RTA_TABLE.rawValue)
    package static let rtaVia = UInt16(RTA_VIA.rawValue)
    package static let rtaNexthopID = UInt16(RTA_NH_ID.rawValue)
    package static let tableMain = UInt32(RT_TABLE_MAIN.rawValue)  // 254
    package static let tableLocal = UInt32(RT_TABLE_LOCAL.rawValue)  // 255
    package static let typeUnicast = UInt8(RTN_UNICAST)

    // families and groups
    package static let familyUnspec = UInt8(AF_UNSPEC)
    package static let familyInet = UInt8(AF_INET)
    package static let familyInet6 = UInt8(AF_INET6)
    package static let familyBridge = UInt8(AF_BRIDGE)
    /// Links, IPv4/IPv6 addresses, IPv4/IPv6 routes (0x551), and the ND user options of Router
    /// Advertisements (`RTNLGRP_ND_USEROPT`, group 20, open to any user: 0x80000).
    package static let monitorGroups =
        UInt32(
            RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE
                | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE) | (1 << (RTNLGRP_ND_USEROPT.rawValue - 1))

    // link flags and hardware types
    package static let iffUp = UInt32(IFF_UP)
    package static let iffLowerUp = UInt32(IFF_LOWER_UP.rawValue)
    package static let arphrdEther = UInt16(ARPHRD_ETHER)
    package static let arphrdLoopback = UInt16(ARPHRD_LOOPBACK)
    package static let arphrdNone = UInt16(ARPHRD_NONE)
    package static let arphrdPPP = UInt16(ARPHRD_PPP)
    package static let arphrdRawIP = UInt16(ARPHRD_RAWIP)
    package static let arphrdTunnel = UInt16(ARPHRD_TUNNEL)
    package static let arphrdTunnel6 = UInt16(ARPHRD_TUNNEL6)
    package static let arphrdIPGRE = UInt16(ARPHRD_IPGRE)
    package static let arphrdSIT = UInt16(ARPHRD_SIT)
    package static let arphrdIP6GRE = UInt16(ARPHRD_IP6GRE)
    package static let arphrdIEEE80211 = UInt16(ARPHRD_IEEE80211)
    package static let arphrdIEEE80211Prism = UInt16(ARPHRD_IEEE80211_PRISM)
    package static let arphrdIEEE80211Radiotap = UInt16(ARPHRD_IEEE80211_RADIOTAP)

    /// Rounds up to the 4-byte alignment of netlink messages and attributes.
    @inline(__always) package static func align(_ n: Int) -> Int { (n + 3) & ~3 }
}
