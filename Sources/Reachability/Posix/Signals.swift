import Dispatch
import Glibc

/// Delivers process signals as an async stream. The default action of each watched signal is
/// ignored first (closing the race before the source is armed), so a SIGHUP never kills us.
///
/// Contract: create once per process for a given set of signals, keep the value alive while
/// the stream is iterated.
public final class SignalWatcher: @unchecked Sendable {
    // `sources` is written once in init and only read (cancelled) in deinit.
    public let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    public init(_ watched: [Int32] = [SIGTERM, SIGINT, SIGHUP]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        signals = stream
        let queue = DispatchQueue(label: "signals")
        var made: [any DispatchSourceSignal] = []
        for s in watched {
            signal(s, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: s, queue: queue)
            source.setEventHandler { @Sendable in continuation.yield(s) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    deinit { for s in sources { s.cancel() } }
}
