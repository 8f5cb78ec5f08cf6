// Embeds the Reachability library: one check now, then the first three monitoring rounds.
// Usage: reachability-example [HTTP_URL [ICMP_HOST]]   (default: the seed's public endpoints)
import Reachability

let args = Array(CommandLine.arguments.dropFirst())
let reachability = Reachability(
    configuration: .init(
        probeMode: .parallel,  // .parallel, .httpOnly, .icmpOnly, .quorum(n)
        timeout: .seconds(5),
        httpProbeURL: args.first ?? Probe.defaultHTTPURL,
        icmpHost: args.dropFirst().first ?? Probe.defaultICMPHost))  // pathMonitoring: true (netlink)

let status = await reachability.check()  // one round now, no hysteresis
print(status.state, status.reason?.label ?? "", status.connectionType, status.isReachable)

var rounds = 0
for await status in reachability.statusStream {  // monitoring runs while someone iterates
    print(status.state, status.reason?.label ?? "", status.connectionType)
    rounds += 1
    if rounds == 3 { break }
}
