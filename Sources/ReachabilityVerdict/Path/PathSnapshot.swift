/// The host's network as one value: interfaces, addresses and default routes of the watched
/// namespace at one moment, plus how many changes have been published before it.
///
/// Everything a consumer needs is derived from these three lists by pure functions
/// (`status(for:)`, `primaryInterface(for:)`), so a snapshot built by hand in a test behaves
/// exactly like one from the kernel. Lists are kept sorted (interfaces by index, addresses by
/// interface then family then text, routes by family then metric) so equal states compare equal.
package struct PathSnapshot: Sendable, Equatable, Codable {
    package var interfaces: [NetworkInterface]
    package var addresses: [InterfaceAddress]
    /// Unicast default routes of both families, of the main table and of every other table
    /// (policy routing) but `local`.
    package var defaultRoutes: [DefaultRoute]
    /// What routers announce per interface (captive-portal API, PREF64), by interface index.
    package var announcements: [RouterAnnouncement] = []
    /// How many changed snapshots were published before this one by its source (0 for the first).
    /// Feeds `reachability_path_changes_total`.
    package var changeCount: Int

    package init(
        interfaces: [NetworkInterface], addresses: [InterfaceAddress] = [],
        defaultRoutes: [DefaultRoute] = [], announcements: [RouterAnnouncement] = [], changeCount: Int = 0
    ) {
        self.announcements = announcements.sorted { $0.interfaceIndex < $1.interfaceIndex }
        self.interfaces = interfaces.sorted { $0.index < $1.index }
        self.addresses = addresses.sorted {
            ($0.interfaceIndex, $0.family == .ipv6 ? 1 : 0, $0.address, $0.prefixLength)
                < ($1.interfaceIndex, $1.family == .ipv6 ? 1 : 0, $1.address, $1.prefixLength)
        }
        self.defaultRoutes = defaultRoutes.sorted {
            ($0.family == .ipv6 ? 1 : 0, $0.isMain ? 0 : 1, $0.metric, $0.interfaceIndex, $0.gateway ?? "", $0.table)
                < (
                    $1.family == .ipv6 ? 1 : 0, $1.isMain ? 0 : 1, $1.metric, $1.interfaceIndex, $1.gateway ?? "",
                    $1.table
                )
        }
        self.changeCount = changeCount
    }

    /// No interfaces at all (before the first dump).
    package static let empty = PathSnapshot(interfaces: [])

    /// Whether `family` has a usable path; see `PathUnsatisfiedReason` for the precedence.
    package func status(for family: IPFamily) -> PathStatus {
        PathStatus.evaluate(
            family, interfaces: interfaces, addresses: addresses,
            defaultRoutes: defaultRoutes
        ).status
    }

    /// The interface carrying the best (lowest-metric) usable default route of `family`;
    /// nil when the family is unsatisfied.
    package func primaryInterface(for family: IPFamily) -> NetworkInterface? {
        guard let route = primaryRoute(for: family) else { return nil }
        return interface(index: route.interfaceIndex)
    }

    /// The default route `status(for:)` chose; nil when the family is unsatisfied.
    package func primaryRoute(for family: IPFamily) -> DefaultRoute? {
        PathStatus.evaluate(
            family, interfaces: interfaces, addresses: addresses,
            defaultRoutes: defaultRoutes
        ).route
    }

    /// True when at least one family is satisfied.
    package var overallSatisfied: Bool { IPFamily.allCases.contains { status(for: $0).isSatisfied } }

    package func interface(index: Int) -> NetworkInterface? { interfaces.first { $0.index == index } }
    package func interface(named name: String) -> NetworkInterface? { interfaces.first { $0.name == name } }

    /// The addresses of one interface.
    package func addresses(of interfaceIndex: Int) -> [InterfaceAddress] {
        addresses.filter { $0.interfaceIndex == interfaceIndex }
    }

    /// Equal apart from `changeCount`: what decides whether a new snapshot is a change.
    package func hasSameState(as other: PathSnapshot) -> Bool {
        interfaces == other.interfaces && addresses == other.addresses
            && defaultRoutes == other.defaultRoutes && announcements == other.announcements
    }

    /// What routers announced on the interface named `name`, if anything.
    package func announcement(on name: String) -> RouterAnnouncement? {
        announcements.first { $0.interfaceName == name }
    }
}
