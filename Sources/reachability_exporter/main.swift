import Glibc
import ReachabilityExporter
import ReachabilityVerdict

// First, while the process has one thread: a capability the executable file lends to a user
// serves raw ICMP sockets only (BorrowedCapabilities), so no thread may start with it effective.
if let refusal = BorrowedCapabilities.holdAtStart() {
    writeErr("reachability_exporter: error: \(refusal)\n")
    exit(1)
}

// Thin entry point: everything testable lives in the Reachability library.
// The arguments come from /proc/self/cmdline: without /proc (a bare chroot) they would read as
// none, and "no flags" must never mean "probe the public defaults" by accident.
guard !CommandLine.arguments.isEmpty, CommandLine.arguments.count == Int(CommandLine.argc) else {
    writeErr("reachability_exporter: error: cannot read the command line (is /proc mounted?)\n")
    exit(64)
}
let status = await ExporterCommand.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
