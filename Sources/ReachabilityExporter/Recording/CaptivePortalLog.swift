import ReachabilityVerdict
import Synchronization

/// The log's side of the network's word: a line when what an interface's captive-portal API
/// says changes (announced, captive or not, where to log in, an error and its reason), and a
/// warning when a hook file is ignored. Once per change, never per round.
package final class CaptivePortalLog: RoundObserver {
    private let logger: Logger
    private let last = Mutex<(said: [String: String], ignored: Set<String>)>(([:], []))

    package init(logger: Logger) { self.logger = logger }

    package func roundCompleted(_ status: ReachabilityStatus) {
        var lines: [(String, [(String, any LogValueConvertible)])] = []
        var warnings: [String] = []
        last.withLock { l in
            var now: [String: String] = [:]
            for p in status.captivePortals {
                var fields: [(String, any LogValueConvertible)] = [
                    ("interface", p.interface), ("source", p.source.rawValue),
                ]
                if !p.api.isEmpty { fields.append(("api", p.api)) }
                if let a = p.answer {
                    fields.append(("captive", a.captive))
                    if let login = a.userPortalURL { fields.append(("login", login)) }
                    if let venue = a.venueInfoURL { fields.append(("venue", venue)) }
                }
                if let problem = p.problem {
                    fields.append(("reason", problem.kind.rawValue))
                    fields.append(("err", problem.message))
                }
                let key = fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
                now[p.interface] = key
                if l.said[p.interface] != key { lines.append(("captive portal API", fields)) }
            }
            for gone in l.said.keys where now[gone] == nil {
                lines.append(("captive portal API no longer announced", [("interface", gone)]))
            }
            l.said = now
            warnings = status.captivePortalIgnored.filter { !l.ignored.contains($0) }
            l.ignored = Set(status.captivePortalIgnored)
        }
        for (message, fields) in lines {
            logger.log(.info, message, fields, source: Logger.source(#fileID, #line))
        }
        for file in warnings {
            logger.warn(
                "captive portal hook file ignored: owned by another user, writable by others, a link or not a regular file",
                ("file", file))
        }
    }
}
