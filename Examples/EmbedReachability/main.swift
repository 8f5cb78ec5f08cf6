// Embeds the ReachabilityVerdict library: one check now, then the first three monitoring rounds.
// Usage: reachability-example [HTTP_URL [ICMP_HOST]]   (default: the seed's public endpoints)
import ReachabilityVerdict

let args = Array(CommandLine.arguments.dropFirst())
var configuration = Reachability.Configuration(
    probeMode: .parallel,  // .parallel, .httpOnly, .icmpOnly, .quorum(n)
    timeout: .seconds(5),
    httpProbeURL: args.first ?? Probe.defaultHTTPURL,  // yours: any 200–399 answers (README)
    icmpHost: args.dropFirst().first ?? Probe.defaultICMPHost)  // pathMonitoring: true (netlink)
configuration.log = { record in print(record.logfmt) }  // the library's log, routed by the app
let reachability = Reachability(configuration: configuration)

let status = await reachability.check()  // one round now, no hysteresis
print(status.state, status.reason?.label ?? "", status.connectionType, status.isReachable)

var rounds = 0
for await status in reachability.statusStream {  // monitoring runs while someone iterates
    print(status.state, status.reason?.label ?? "", status.connectionType)
    rounds += 1
    if rounds == 3 { break }
}
