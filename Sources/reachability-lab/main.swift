import Glibc
import ReachabilityExporter
import ReachabilityVerdict

// The fault lab's upstream services (scripts/lab fault starts one per upstream namespace):
//
//   reachability-lab --control=PATH --cert=PEM --key=PEM --wrong-cert=PEM --wrong-key=PEM \
//       --address=198.51.100.1 --address=2001:db8:100::1 --dns-address=198.51.100.53 ...
//
// Serves HTTP :80 and HTTPS :443 on every --address and DNS :53 on every --dns-address, prints
// "ready" on stdout once every socket is bound, then takes commands on the control socket
// (`http portal302`, `tls wrong`, `dns dead`, `status`, `quit`; see LabServices). It binds
// only the addresses it is given, and the lab gives it documentation prefixes inside its own
// namespaces, so nothing it serves is reachable from the host.

func die(_ message: String) -> Never {
    let line = "reachability-lab: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(64)
}

var settings = LabServices.Settings()
var control: String?
for argument in CommandLine.arguments.dropFirst() {
    let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
    guard parts.count == 2 else { die("expected --flag=value, got \(argument)") }
    switch parts[0] {
    case "--control": control = parts[1]
    case "--address": settings.addresses.append(parts[1])
    case "--dns-address": settings.dnsAddresses.append(parts[1])
    case "--cert": settings.certificate = parts[1]
    case "--key": settings.key = parts[1]
    case "--wrong-cert": settings.wrongCertificate = parts[1]
    case "--wrong-key": settings.wrongKey = parts[1]
    case "--login-url": settings.loginURL = parts[1]
    case "--answer": settings.answers.append(parts[1])
    default: die("unknown flag \(parts[0])")
    }
}
guard let control else { die("--control=PATH is required") }
guard !settings.addresses.isEmpty || !settings.dnsAddresses.isEmpty else {
    die("nothing to serve: give --address or --dns-address")
}
signal(SIGPIPE, SIG_IGN)

let services: LabServices
do { services = try LabServices(settings) } catch { die("cannot start: \(error)") }
print("ready \(services.summary)")
fflush(nil)
do { try LabControl.serve(path: control, services: services) } catch { die("control socket \(control): \(error)") }
exit(0)
