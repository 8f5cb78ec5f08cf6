import Glibc
import ReachabilityExporter
import ReachabilityTestSupport
import ReachabilityVerdict
import Synchronization

/// The "internet" of the fault lab, served inside an upstream namespace: on every lab address an
/// HTTP server on :80 (a 204 endpoint, a "Success" page, a login page) and an HTTPS server on
/// :443 (the lab CA's certificate, or a wrong one), and on every DNS address a UDP responder on
/// :53 that answers the lab name. Each service's mode is switched at run time with `apply(_:)`
/// (from the control socket); a service that is `down` has no socket at all (so the kernel
/// refuses), a `dead` DNS server reads queries and never answers.
///
/// Built on the test-support servers (`LoopbackHTTPServer`, `DNSTestServer`); not a product.
final class LabServices: Sendable {
    /// What the HTTP endpoints answer.
    enum HTTPMode: String, CaseIterable, Sendable {
        /// 204 on /generate_204, 200 "Success" on /success.html, 404 elsewhere.
        case normal
        /// A captive portal that redirects everything to its login page.
        case portal302
        /// A captive portal that answers everything with its 200 login page.
        case portal200
        /// No listener: connections are refused.
        case down
    }

    /// Which certificate the HTTPS endpoints present.
    enum TLSMode: String, CaseIterable, Sendable {
        case normal, wrong, down
    }

    /// What the DNS responders answer.
    enum DNSMode: String, CaseIterable, Sendable {
        /// The lab addresses for the lab name (A and AAAA records).
        case normal
        /// Reads every query and answers none (a dead server behind a live link).
        case dead
        /// A portal's resolver: the lab name resolves to a private address.
        case `private`
        /// No socket: the kernel answers with port unreachable.
        case down
    }

    /// Files and addresses the lab serves with.
    struct Settings: Sendable {
        var addresses: [String] = []
        var dnsAddresses: [String] = []
        var certificate = ""
        var key = ""
        var wrongCertificate = ""
        var wrongKey = ""
        /// Where the portal modes send clients (a URL on the lab).
        var loginURL = "http://198.51.100.1/login"
        /// What the lab name resolves to in `normal` DNS mode, and in `private` mode.
        var answers: [String] = ["198.51.100.1", "2001:db8:100::1"]
        var privateAnswers: [String] = ["10.0.0.1", "fd00::1"]
    }

    private struct State {
        var http: HTTPMode = .normal
        var tls: TLSMode = .normal
        var dns: DNSMode = .normal
        var httpServers: [LoopbackHTTPServer] = []
        var tlsServers: [LoopbackHTTPServer] = []
        var dnsServers: [DNSTestServer] = []
    }

    private let settings: Settings
    private let identity: LoopbackTLSIdentity
    private let wrongIdentity: LoopbackTLSIdentity
    /// Read by every connection thread; changed by the control socket.
    private let httpMode = Mutex<HTTPMode>(.normal)
    private let state = Mutex(State())

    init(_ settings: Settings) throws {
        self.settings = settings
        identity = try LoopbackTLSIdentity(certificateFile: settings.certificate, keyFile: settings.key)
        wrongIdentity = try LoopbackTLSIdentity(certificateFile: settings.wrongCertificate, keyFile: settings.wrongKey)
        try state.withLock { s in
            s.httpServers = try startHTTP(tls: nil)
            s.tlsServers = try startHTTP(tls: identity)
            s.dnsServers = try startDNS(.normal)
        }
    }

    /// The current modes, as the control socket reports them.
    var summary: String {
        state.withLock { "http=\($0.http.rawValue) tls=\($0.tls.rawValue) dns=\($0.dns.rawValue)" }
    }

    /// Runs one control command (`http MODE`, `tls MODE`, `dns MODE`, `status`) and returns the
    /// reply line: `ok <modes>` or `error <why>`.
    func apply(_ line: String) -> String {
        let words = line.split(separator: " ").map(String.init)
        do {
            switch (words.first, words.count) {
            case ("status", 1):
                break
            case ("http", 2):
                guard let mode = HTTPMode(rawValue: words[1]) else { return "error unknown http mode \(words[1])" }
                try setHTTP(mode)
            case ("tls", 2):
                guard let mode = TLSMode(rawValue: words[1]) else { return "error unknown tls mode \(words[1])" }
                try setTLS(mode)
            case ("dns", 2):
                guard let mode = DNSMode(rawValue: words[1]) else { return "error unknown dns mode \(words[1])" }
                try setDNS(mode)
            default:
                return
                    "error expected: status | http normal|portal302|portal200|down | tls normal|wrong|down | dns normal|dead|private|down"
            }
        } catch {
            return "error \(error)"
        }
        return "ok \(summary)"
    }

    private func setHTTP(_ mode: HTTPMode) throws {
        httpMode.withLock { $0 = mode }
        try state.withLock { s in
            if mode == .down {
                for server in s.httpServers { server.stop() }
                s.httpServers = []
            } else if s.httpServers.isEmpty {
                s.httpServers = try startHTTP(tls: nil)
            }
            s.http = mode
        }
    }

    private func setTLS(_ mode: TLSMode) throws {
        try state.withLock { s in
            guard mode != s.tls else { return }
            // The identity is fixed per server: switching certificates means new listeners.
            for server in s.tlsServers { server.stop() }
            s.tlsServers = []
            switch mode {
            case .normal: s.tlsServers = try startHTTP(tls: identity)
            case .wrong: s.tlsServers = try startHTTP(tls: wrongIdentity)
            case .down: break
            }
            s.tls = mode
        }
    }

    private func setDNS(_ mode: DNSMode) throws {
        try state.withLock { s in
            if mode == .down {
                for server in s.dnsServers { server.stop() }
                s.dnsServers = []
            } else if s.dnsServers.isEmpty {
                s.dnsServers = try startDNS(mode)
            } else {
                for server in s.dnsServers { server.setBehaviour(behaviour(mode)) }
            }
            s.dns = mode
        }
    }

    private func behaviour(_ mode: DNSMode) -> DNSTestServer.Behaviour {
        switch mode {
        case .normal: .answer(settings.answers)
        case .private: .answer(settings.privateAnswers)
        case .dead, .down: .silence
        }
    }

    private func startDNS(_ mode: DNSMode) throws -> [DNSTestServer] {
        try settings.dnsAddresses.map { try DNSTestServer(host: $0, port: 53, behaviour: behaviour(mode)) }
    }

    private func startHTTP(tls: LoopbackTLSIdentity?) throws -> [LoopbackHTTPServer] {
        var servers: [LoopbackHTTPServer] = []
        for address in settings.addresses {
            servers.append(try Self.listen(address, port: tls == nil ? 80 : 443, tls: tls, behavior: pages()))
        }
        return servers
    }

    /// A listener that was just stopped may hold its port for a moment (its accept thread
    /// closes it): retry EADDRINUSE for up to a second.
    private static func listen(_ host: String, port: UInt16, tls: LoopbackTLSIdentity?, behavior: LoopbackHTTPBehavior)
        throws -> LoopbackHTTPServer
    {
        var attempt = 0
        while true {
            do {
                return try LoopbackHTTPServer(host: host, port: port, tls: tls, behavior: behavior)
            } catch {
                attempt += 1
                if error.code != EADDRINUSE || attempt >= 50 { throw error }
                usleep(20_000)
            }
        }
    }

    /// The HTTP(S) answers for the current mode, read per request.
    private func pages() -> LoopbackHTTPBehavior {
        let loginPage = "<html><body><form action=\"/login\">Sign in to continue</form></body></html>"
        let login = settings.loginURL
        return LoopbackHTTPBehavior { [self] c in
            guard let request = c.readRequest() else { return }
            let isHead = request.hasPrefix("HEAD ")
            let target = request.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
            let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
            let answer: String
            switch httpMode.withLock({ $0 }) {
            case .portal302 where path != "/login":
                answer = LoopbackHTTPBehavior.response(
                    302, "Found", headers: [("Location", login)], body: "", isHead: isHead)
            case .portal200, .portal302:
                answer = LoopbackHTTPBehavior.response(
                    200, "OK", headers: [("Content-Type", "text/html")], body: loginPage, isHead: isHead)
            case .normal, .down:
                switch path {
                case "/generate_204":
                    answer = LoopbackHTTPBehavior.response(204, "No Content", headers: [], body: "", isHead: isHead)
                case "/success.html":
                    answer = LoopbackHTTPBehavior.response(
                        200, "OK", headers: [("Content-Type", "text/html")],
                        body: "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>", isHead: isHead)
                case "/login":
                    answer = LoopbackHTTPBehavior.response(
                        200, "OK", headers: [("Content-Type", "text/html")], body: loginPage, isHead: isHead)
                default: answer = LoopbackHTTPBehavior.response(404, "Not Found", headers: [], body: "", isHead: isHead)
                }
            }
            c.write(answer)
        }
    }
}
