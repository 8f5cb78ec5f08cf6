extension ReachabilityMonitor {
    /// Reads the captive-portal APIs of the interfaces the scopes use now: each uplink's (fetched
    /// bound to it), then those of the overall and per-family default routes (`CaptivePortalWatch`).
    package func refreshCaptivePortals(_ settings: MonitorSettings, now: Double) async -> [CaptivePortalState] {
        guard settings.captivePortal.enabled else { return [] }
        let index = Dictionary(
            path.interfaceNames.byIndex.map { ($0.value, Int($0.key)) }, uniquingKeysWith: { a, _ in a })
        var list = settings.uplinks.map { CaptivePortalWatch.Interface(name: $0, index: index[$0], bound: true) }
        for scope in [Scope.overall, .family(.ipv4), .family(.ipv6)] {
            guard let name = path.gatewayRoute(for: scope)?.interface else { continue }
            list.append(CaptivePortalWatch.Interface(name: name, index: index[name], bound: false))
        }
        return await captive.refresh(
            list, announcements: path.announcements, settings: settings.captivePortal, timeout: settings.timeout,
            now: now)
    }
}
