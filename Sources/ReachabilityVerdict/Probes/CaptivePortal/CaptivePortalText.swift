/// A captive-portal state for people (`check`'s text) and for programs (`check`'s JSON).
package enum CaptivePortalText {
    /// `  captive portal on wlan0 (dhcp4): captive, log in at https://…; 300 s left`.
    package static func line(_ p: CaptivePortalState, now: Double) -> String {
        var out = "  captive portal on \(p.interface) (\(p.source.rawValue)"
        out += p.api.isEmpty ? "): " : ", \(p.api)): "
        guard let a = p.answer else { return out + "no answer: \(p.problem?.message ?? "not read yet")" }
        out += a.captive ? "captive" : "not captive"
        if a.captive, let login = a.userPortalURL { out += ", log in at \(login)" }
        if let left = p.secondsRemaining(at: now) { out += "; \(Int(left)) s left" }
        if let bytes = a.bytesRemaining { out += "; \(Int(bytes)) bytes left" }
        if a.canExtendSession == true { out += "; the session can be extended" }
        if !a.captive, let login = a.userPortalURL { out += "; portal at \(login)" }
        if let venue = a.venueInfoURL { out += "; venue \(venue)" }
        return out
    }

    package static func json(_ p: CaptivePortalState, now: Double) -> String {
        func number(_ n: Double?) -> String { n.map { String(Int64($0.rounded(.down))) } ?? "null" }
        let a = p.answer
        let fields = [
            "\"interface\":\(Logger.jsonString(p.interface))", "\"source\":\(Logger.jsonString(p.source.rawValue))",
            "\"api\":\(p.api.isEmpty ? "null" : Logger.jsonString(p.api))",
            "\"captive\":\(a.map { String($0.captive) } ?? "null")",
            "\"user_portal_url\":\(a?.userPortalURL.map(Logger.jsonString) ?? "null")",
            "\"venue_info_url\":\(a?.venueInfoURL.map(Logger.jsonString) ?? "null")",
            "\"seconds_remaining\":\(number(p.secondsRemaining(at: now)))",
            "\"bytes_remaining\":\(number(a?.bytesRemaining))",
            "\"can_extend_session\":\(a?.canExtendSession.map { String($0) } ?? "null")",
            "\"error\":\(p.problem.map { Logger.jsonString($0.message) } ?? "null")",
            "\"error_reason\":\(p.problem.map { Logger.jsonString($0.kind.rawValue) } ?? "null")",
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }
}
