/// Why reading a captive-portal API gave no answer: a closed set of labels (the `reason` of
/// `reachability_captive_portal_api_errors_total`) and a message for people.
package struct CaptivePortalProblem: Error, Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, CaseIterable {
        /// The announced URI is not one RFC 8908 allows (not https, too long, control characters).
        case uri
        /// Name resolution, connection or transfer failed.
        case connect
        case timeout
        /// The TLS handshake failed: an untrusted certificate or one for another name.
        case tls
        /// An answer other than 200.
        case status
        /// A redirect: an API answers in place, it is not followed.
        case redirect
        /// Not `application/captive+json`.
        case contentType = "content_type"
        /// A body over `CaptivePortalAnswer.maxBody`.
        case tooLarge = "too_large"
        /// Not an RFC 8908 answer (`CaptivePortalAnswer.parse`).
        case invalid
        /// A hook file that others could have written (or a link, or no regular file): ignored.
        case untrusted
    }

    package let kind: Kind
    package let message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    package var description: String { message }
}

/// Reads an RFC 8908 captive-portal API: one GET over TLS (the certificate valid for the URI's
/// host, trusted by the system or `ca_file`), `Accept: application/captive+json`, direct (never
/// through a proxy), no redirect followed, the body bounded at `CaptivePortalAnswer.maxBody`,
/// all within the deadline. Says how long the answer may be kept (`Cache-Control: max-age`).
package enum CaptivePortalClient {
    package static let mediaType = "application/captive+json"

    /// An answer and how long it may be kept (`max-age`, seconds), or why there is none.
    package typealias Read = Result<(answer: CaptivePortalAnswer, maxAge: Double?), CaptivePortalProblem>

    package static func fetch(
        _ url: ProbeURL, interface: String?, caFile: String?, deadline: ContinuousClock.Instant
    ) async -> Read {
        let client = HTTPClientSettings(
            family: .any, interface: interface, caFile: caFile, insecureSkipVerify: false,
            bodyLimit: CaptivePortalAnswer.maxBody, headers: [.init("Accept", mediaType)], proxy: .direct)
        let exchange = HTTPExchange(
            url: url, method: .get, hostHeader: url.authority, serverName: url.host, client: client)
        var trace = HTTPRoundTrace()
        let response: HTTPExchange.Response
        do throws(ProbeFailure) {
            response = try await exchange.run(deadline: deadline, trace: &trace)
        } catch {
            let kind: CaptivePortalProblem.Kind =
                switch error.reason {
                case .timeout: .timeout
                case .tls, .tlsNameMismatch: .tls
                case .tooLarge: .tooLarge
                default: .connect
                }
            return .failure(CaptivePortalProblem(kind, error.message))
        }
        return judge(response)
    }

    /// The answer in a response, or why it is none.
    package static func judge(_ response: HTTPExchange.Response) -> Read {
        let head = response.head
        if (300...399).contains(head.status) {
            return .failure(CaptivePortalProblem(.redirect, "the API answered \(head.statusLine) (not followed)"))
        }
        guard head.status == 200 else {
            return .failure(CaptivePortalProblem(.status, "the API answered \(head.statusLine)"))
        }
        let type = head.mediaType
        guard type == mediaType else {
            return .failure(
                CaptivePortalProblem(
                    .contentType,
                    "the API answered as \(type.map { String($0.prefix(64)).debugDescription } ?? "no type"), not \(mediaType)"
                ))
        }
        guard !response.bodyTruncated else {
            return .failure(CaptivePortalProblem(.tooLarge, "the answer is over \(CaptivePortalAnswer.maxBody) bytes"))
        }
        do throws(CaptivePortalAnswer.Problem) {
            let answer = try CaptivePortalAnswer.parse(response.body)
            return .success((answer, maxAge(head.value(of: "Cache-Control"))))
        } catch {
            return .failure(CaptivePortalProblem(.invalid, error.description))
        }
    }

    /// `max-age` of a `Cache-Control` value in seconds (`no-cache`/`no-store`: 0), or nil.
    package static func maxAge(_ value: String?) -> Double? {
        guard let value else { return nil }
        var age: Double?
        for directive in value.lowercased().split(separator: ",") {
            let d = directive.trimmingSpaces
            if d == "no-cache" || d == "no-store" { return 0 }
            if d.hasPrefix("max-age="), let n = Double(d.dropFirst(8)), n.isFinite, n >= 0 { age = n }
        }
        return age
    }
}
