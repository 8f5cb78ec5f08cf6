/// Why a family has no usable path; raw values are stable `reason` label values.
///
/// Precedence (the first that applies wins): `no_interface` (no non-loopback interface is
/// administratively up), `no_carrier` (some are up, none has a carrier), `no_address` (some
/// have a carrier, none has a usable address of the family), `no_default_route` (some have a
/// usable address, but no main-table default route of the family goes through one of them).
/// Each reason is the first requirement that *no* interface meets, so it names the furthest
/// any interface got: a host with a dead `eth0` holding the default route and a live `wlan0`
/// without one reports `no_default_route`, not `no_carrier`.
public enum PathUnsatisfiedReason: String, Sendable, CaseIterable, Codable {
    /// No non-loopback interface is administratively up.
    case noInterface = "no_interface"
    /// Interfaces are up, none has a carrier.
    case noCarrier = "no_carrier"
    /// Interfaces have a carrier, none has a usable address of the family.
    case noAddress = "no_address"
    /// Interfaces have a usable address, no main-table default route of the family goes through one.
    case noDefaultRoute = "no_default_route"
}

/// Whether one IP family has a usable path out of the host, judged from local state only
/// (interfaces, addresses, routes). It says nothing about whether the internet answers; that
/// is what the probes are for.
package enum PathStatus: Sendable, Equatable, Hashable, Codable {
    /// A default route exists via `interface`, which is up, has carrier and a usable address.
    case satisfied(interface: String)
    case unsatisfied(reason: PathUnsatisfiedReason)

    package var isSatisfied: Bool {
        if case .satisfied = self { return true }
        return false
    }

    /// The interface name when satisfied.
    package var interfaceName: String? {
        if case .satisfied(let name) = self { return name }
        return nil
    }

    /// The reason when unsatisfied.
    package var reason: PathUnsatisfiedReason? {
        if case .unsatisfied(let reason) = self { return reason }
        return nil
    }

    /// The pure rule behind `PathSnapshot.status(for:)`.
    ///
    /// Usable interfaces are non-loopback, up, with carrier and with an address for which
    /// `InterfaceAddress.isUsableForInternet` holds (IPv6: global scope, not tentative). The
    /// chosen route is the lowest-metric default route of the family through a usable
    /// interface; ties go to the lower interface index, then the gateway text. Routes through
    /// unusable interfaces are skipped even if their metric is lower: the kernel may still
    /// prefer such a route (IPv4 keeps `linkdown` routes), but it cannot carry traffic.
    package static func evaluate(
        _ family: IPFamily, interfaces: [NetworkInterface], addresses: [InterfaceAddress],
        defaultRoutes: [DefaultRoute]
    ) -> (status: PathStatus, route: DefaultRoute?) {
        let up = interfaces.filter { $0.type != .loopback && $0.isUp }
        guard !up.isEmpty else { return (.unsatisfied(reason: .noInterface), nil) }
        let running = up.filter(\.hasCarrier)
        guard !running.isEmpty else { return (.unsatisfied(reason: .noCarrier), nil) }
        let withAddress = Set(
            addresses.lazy
                .filter { $0.family == family && $0.isUsableForInternet }
                .map(\.interfaceIndex))
        let addressed = running.filter { withAddress.contains($0.index) }
        guard !addressed.isEmpty else { return (.unsatisfied(reason: .noAddress), nil) }
        let usable = Dictionary(addressed.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        // The host's own traffic follows the main table; other tables serve their uplinks only.
        let best =
            defaultRoutes
            .filter { $0.family == family && $0.isMain && usable[$0.interfaceIndex] != nil }
            .min { a, b in
                (a.metric, a.interfaceIndex, a.gateway ?? "") < (b.metric, b.interfaceIndex, b.gateway ?? "")
            }
        guard let best, let interface = usable[best.interfaceIndex] else {
            return (.unsatisfied(reason: .noDefaultRoute), nil)
        }
        return (.satisfied(interface: interface.name), best)
    }
}
