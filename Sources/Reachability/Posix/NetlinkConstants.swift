import CShim

/// The rtnetlink numbers the path monitor uses, converted once from the kernel headers (CShim)
/// into the widths the wire format has. Keeping the conversions here keeps the decoder readable.
enum RTNL {
    // nlmsghdr
    static let headerSize = MemoryLayout<nlmsghdr>.size  // 16
    static let messageDone = UInt16(NLMSG_DONE)
    static let messageError = UInt16(NLMSG_ERROR)
    static let messageOverrun = UInt16(NLMSG_OVERRUN)
    static let flagRequest = UInt16(NLM_F_REQUEST)
    static let flagDump = UInt16(NLM_F_DUMP)
    static let flagDumpInterrupted = UInt16(NLM_F_DUMP_INTR)
    static let flagReplace = UInt16(NLM_F_REPLACE)

    // message types
    static let newLink = UInt16(RTM_NEWLINK)
    static let delLink = UInt16(RTM_DELLINK)
    static let getLink = UInt16(RTM_GETLINK)
    static let newAddress = UInt16(RTM_NEWADDR)
    static let delAddress = UInt16(RTM_DELADDR)
    static let getAddress = UInt16(RTM_GETADDR)
    static let newRoute = UInt16(RTM_NEWROUTE)
    static let delRoute = UInt16(RTM_DELROUTE)
    /// An RA option the kernel does not process itself (captive portal, PREF64, RDNSS…).
    static let newNDUserOption = UInt16(RTM_NEWNDUSEROPT)
    static let getRoute = UInt16(RTM_GETROUTE)

    // fixed bodies
    static let ifinfomsgSize = MemoryLayout<ifinfomsg>.size  // 16
    static let ifaddrmsgSize = MemoryLayout<ifaddrmsg>.size  // 8
    static let rtmsgSize = MemoryLayout<rtmsg>.size  // 12
    static let rtnexthopSize = MemoryLayout<rtnexthop>.size  // 8

    // link attributes
    static let iflaName = UInt16(IFLA_IFNAME)
    static let iflaMTU = UInt16(IFLA_MTU)
    static let iflaOperState = UInt16(IFLA_OPERSTATE)
    static let iflaLinkInfo = UInt16(IFLA_LINKINFO)
    static let iflaInfoKind = UInt16(IFLA_INFO_KIND)

    // address attributes
    static let ifaAddress = UInt16(IFA_ADDRESS)
    static let ifaLocal = UInt16(IFA_LOCAL)
    static let ifaFlags = UInt16(IFA_FLAGS)
    static let ifaFlagTentative = UInt32(IFA_F_TENTATIVE)
    static let ifaFlagDeprecated = UInt32(IFA_F_DEPRECATED)
    static let ifaFlagDADFailed = UInt32(IFA_F_DADFAILED)

    // route attributes
    static let rtaDestination = UInt16(RTA_DST.rawValue)
    static let rtaOutputInterface = UInt16(RTA_OIF.rawValue)
    static let rtaGateway = UInt16(RTA_GATEWAY.rawValue)
    static let rtaPriority = UInt16(RTA_PRIORITY.rawValue)
    static let rtaMultipath = UInt16(RTA_MULTIPATH.rawValue)
    static let rtaTable = UInt16(RTA_TABLE.rawValue)
    static let rtaVia = UInt16(RTA_VIA.rawValue)
    static let rtaNexthopID = UInt16(RTA_NH_ID.rawValue)
    static let tableMain = UInt32(RT_TABLE_MAIN.rawValue)  // 254
    static let tableLocal = UInt32(RT_TABLE_LOCAL.rawValue)  // 255
    static let typeUnicast = UInt8(RTN_UNICAST)

    // families and groups
    static let familyUnspec = UInt8(AF_UNSPEC)
    static let familyInet = UInt8(AF_INET)
    static let familyInet6 = UInt8(AF_INET6)
    static let familyBridge = UInt8(AF_BRIDGE)
    /// Links, IPv4/IPv6 addresses, IPv4/IPv6 routes (0x551), and the ND user options of Router
    /// Advertisements (`RTNLGRP_ND_USEROPT`, group 20, open to any user: 0x80000).
    static let monitorGroups =
        UInt32(
            RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE
                | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE) | (1 << (RTNLGRP_ND_USEROPT.rawValue - 1))

    // link flags and hardware types
    static let iffUp = UInt32(IFF_UP)
    static let iffLowerUp = UInt32(IFF_LOWER_UP.rawValue)
    static let arphrdEther = UInt16(ARPHRD_ETHER)
    static let arphrdLoopback = UInt16(ARPHRD_LOOPBACK)
    static let arphrdNone = UInt16(ARPHRD_NONE)
    static let arphrdPPP = UInt16(ARPHRD_PPP)
    static let arphrdRawIP = UInt16(ARPHRD_RAWIP)
    static let arphrdTunnel = UInt16(ARPHRD_TUNNEL)
    static let arphrdTunnel6 = UInt16(ARPHRD_TUNNEL6)
    static let arphrdIPGRE = UInt16(ARPHRD_IPGRE)
    static let arphrdSIT = UInt16(ARPHRD_SIT)
    static let arphrdIP6GRE = UInt16(ARPHRD_IP6GRE)
    static let arphrdIEEE80211 = UInt16(ARPHRD_IEEE80211)
    static let arphrdIEEE80211Prism = UInt16(ARPHRD_IEEE80211_PRISM)
    static let arphrdIEEE80211Radiotap = UInt16(ARPHRD_IEEE80211_RADIOTAP)

    /// Rounds up to the 4-byte alignment of netlink messages and attributes.
    @inline(__always) static func align(_ n: Int) -> Int { (n + 3) & ~3 }
}
