/// A step of a probe (an HTTP hop, a DNS exchange over a stream) failed before an answer could
/// be judged, or (`status == .portal`) was intercepted: the reason, status and text of the result.
package struct ProbeFailure: Error {
    package let reason: FailureReason
    package let message: String
    package let status: ProbeStatus

    package init(_ reason: FailureReason, _ message: String, status: ProbeStatus = .failure) {
        self.reason = reason
        self.message = message
        self.status = status
    }

    package init(_ error: StreamError, context: String) {
        switch error {
        case .timedOut: self.init(.timeout, "\(context): timed out")
        case .cancelled: self.init(.error, "\(context): cancelled")
        case .tls(let text): self.init(.tls, "\(context): \(text)")
        case .certificateNameMismatch(let text):
            self.init(
                .tlsNameMismatch, "\(context): \(text) (a trusted certificate for another name: intercepted)",
                status: .portal)
        case .system(let step, let errno): self.init(Self.reason(for: error.kind), "\(context): \(step): \(errno)")
        }
    }

    package init(_ failure: HTTPResponseParser.Failure) {
        switch failure {
        case .headTooLarge, .tooManyFields: self.init(.tooLarge, failure.description)
        case .malformed, .truncated: self.init(.protocolError, failure.description)
        }
    }

    private static func reason(for kind: StreamError.Kind) -> FailureReason {
        switch kind {
        case .timedOut: .timeout
        case .refused: .refused
        case .reset: .reset
        case .unreachable: .unreachable
        case .permission: .permission
        case .tls: .tls
        case .cancelled, .other: .error
        }
    }
}
