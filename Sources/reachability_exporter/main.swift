import Glibc
import Reachability

// Thin entry point: everything testable lives in the Reachability library.
let status = await ExporterCommand.main(Array(CommandLine.arguments.dropFirst()))
exit(status)
