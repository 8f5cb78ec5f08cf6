import Dispatch
import Glibc

/// The process signals the exporter acts on.
package enum ProcessSignal: Sendable, Equatable, CustomStringConvertible {
    case terminate, interrupt, hangup

    package var number: Int32 {
        switch self {
        case .terminate: SIGTERM
        case .interrupt: SIGINT
        case .hangup: SIGHUP
        }
    }

    package var description: String {
        switch self {
        case .terminate: "SIGTERM"
        case .interrupt: "SIGINT"
        case .hangup: "SIGHUP"
        }
    }
}

/// Makes a write to a pipe or socket whose reader is gone fail with `EPIPE` instead of killing
/// the process with SIGPIPE (a log pipe closed under the exporter, say). Every socket send
/// already passes `MSG_NOSIGNAL`; this covers the rest. Idempotent.
package func ignoreBrokenPipes() {
    signal(SIGPIPE, SIG_IGN)
}

/// Delivers process signals as an async stream. The default action of each watched signal is
/// ignored first (closing the race before the source is armed), so a SIGHUP never kills us.
///
/// Contract: create once per process for a given set of signals, keep the value alive while
/// the stream is iterated.
package final class SignalWatcher: @unchecked Sendable {
    // `sources` is written once in init and only read (cancelled) in deinit.
    package let signals: AsyncStream<ProcessSignal>
    private let sources: [any DispatchSourceSignal]

    package init(_ watched: [ProcessSignal] = [.terminate, .interrupt, .hangup]) {
        let (stream, continuation) = AsyncStream<ProcessSignal>.makeStream()
        signals = stream
        let queue = DispatchQueue(label: "signals")
        var made: [any DispatchSourceSignal] = []
        for s in watched {
            signal(s.number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: s.number, queue: queue)
            source.setEventHandler { @Sendable in continuation.yield(s) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    deinit { for s in sources { s.cancel() } }
}

/// Ends the process with status 1 if it is still running `seconds` from now: a shutdown always
/// ends, even when a service is stuck in a call that cannot be cancelled (a blocking read of a
/// file that turned out to be a FIFO, a hung filesystem). `warn` is called just before, on a
/// thread of its own and given at most a second: a log line to a standard error that nobody
/// reads (a full pipe) cannot hold the exit.
package func exitIfStillRunning(after seconds: UInt32, warn: @escaping @Sendable () -> Void) {
    startThread(name: "shutdown-guard") {
        sleep(seconds)
        let warned = DispatchSemaphore(value: 0)
        startThread(name: "shutdown-warn") {
            warn()
            warned.signal()
        }
        _ = warned.wait(timeout: .now() + .seconds(1))
        _exit(1)
    }
}
