/// The one way a validated prober configuration becomes a `ProbeSpec`, for the library's
/// `Probe` factories, the command line's probe flags (built by those factories) and the
/// configuration file (each kind decodes its section, then `ProbeConfiguration.spec`). Each
/// spec rebinds its configuration to an uplink with the configuration's
/// own `bound(to:)`, which validates the interface.
extension ProbeSpec {
    /// Where and how often: the spec's name, target text, pinned family and its own interval and timeout.
    package struct Placement: Sendable {
        package var name: String
        package var target: String
        package var family: IPFamily? = nil
        package var interval: Duration? = nil
        package var timeout: Duration? = nil

        package init(
            name: String, target: String, family: IPFamily? = nil, interval: Duration? = nil,
            timeout: Duration? = nil
        ) {
            self.name = name
            self.target = target
            self.family = family
            self.interval = interval
            self.timeout = timeout
        }
    }

    package static func http(_ config: HTTPProbeConfig, _ at: Placement) -> ProbeSpec {
        ProbeSpec(
            name: at.name, type: config.probeType, target: at.target, family: at.family, interval: at.interval,
            timeout: at.timeout, evidence: config.evidence
        ) { iface throws(ProbeConfigError) in HTTPProber(try config.bound(to: iface)) }
    }

    /// The system resolver cannot be bound to an interface: without a server the probe runs on
    /// the routing table only (`bindsToUplinks` false).
    package static func dns(_ config: DNSProbeConfig, _ at: Placement) -> ProbeSpec {
        ProbeSpec(
            name: at.name, type: .dns, target: at.target, family: at.family, interval: at.interval,
            timeout: at.timeout, evidence: config.evidence, bindsToUplinks: config.server != nil
        ) { iface throws(ProbeConfigError) in DNSProber(config: try config.bound(to: iface)) }
    }

    package static func tcp(_ config: TCPProbeConfig, _ at: Placement) -> ProbeSpec {
        ProbeSpec(
            name: at.name, type: .tcp, target: at.target, family: at.family, interval: at.interval,
            timeout: at.timeout, evidence: config.evidence
        ) { iface throws(ProbeConfigError) in TCPProber(config: try config.bound(to: iface)) }
    }

    package static func icmp(_ config: ICMPProber.Configuration, _ at: Placement) -> ProbeSpec {
        ProbeSpec(
            name: at.name, type: .icmp, target: at.target, family: at.family, interval: at.interval,
            timeout: at.timeout
        ) { iface throws(ProbeConfigError) in
            var c = config
            c.interface = iface
            try c.validate()
            return ICMPProber(c)
        }
    }

    package static func mtu(_ config: MTUProber.Configuration, _ at: Placement) -> ProbeSpec {
        ProbeSpec(
            name: at.name, type: .mtu, target: at.target, family: at.family, interval: at.interval,
            timeout: at.timeout
        ) { iface throws(ProbeConfigError) in
            var c = config
            c.interface = iface
            try c.validate()
            return MTUProber(c)
        }
    }
}
