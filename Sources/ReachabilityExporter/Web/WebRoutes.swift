import ReachabilityVerdict
import Synchronization

/// The exporter's HTTP endpoints: `/metrics` (or `--web.telemetry-path`), `/-/healthy`,
/// `/-/ready`, and the landing page, all under `--web.route-prefix`. Other features add routes
/// through `extraRoutes`; they see the route with the prefix taken off.
package struct WebRoutes: Sendable {
    /// A route may wait (a reload) suspended: it holds no worker thread meanwhile.
    package typealias Route = @Sendable (HTTPRequest) async -> HTTPResponse?

    let registry: MetricsRegistry
    let isReady: @Sendable () -> Bool
    var extraRoutes: [Route] = []
    /// The status page; without one, `/` is a plain landing page.
    package var statusPage: StatusPage?
    /// The route prefix and the telemetry path.
    package var paths = WebPaths()

    package init(registry: MetricsRegistry, isReady: @escaping @Sendable () -> Bool = { true }) {
        self.registry = registry
        self.isReady = isReady
    }

    /// Adds a route tried before the built-in 404.
    package mutating func add(_ route: @escaping Route) { extraRoutes.append(route) }

    package func handle(_ sent: HTTPRequest) async -> HTTPResponse {
        guard let path = paths.route(sent.path) else {
            if let location = paths.redirect(sent.path) {
                return HTTPResponse(status: 302, text: "see \(location)\n", headers: [("Location", location)])
            }
            return HTTPResponse(status: 404, text: "404 page not found\n")
        }
        var request = sent
        request.target = path + sent.target.dropFirst(sent.path.count)
        let readOnly = request.method == "GET" || request.method == "HEAD"
        switch path {
        case paths.telemetry:
            guard readOnly else { return Self.methodNotAllowed("GET, HEAD") }
            let format = ExpositionFormat.negotiate(accept: request.header("accept"))
            let rendered = await registry.renderShared(format)
            var response = HTTPResponse(status: 200, contentType: format.contentType, body: rendered.bytes)
            response.sharedBody = rendered.serial
            return response
        case "/-/healthy":
            guard readOnly else { return Self.methodNotAllowed("GET, HEAD") }
            return HTTPResponse(status: 200, text: "Healthy.\n")
        case "/-/ready":
            guard readOnly else { return Self.methodNotAllowed("GET, HEAD") }
            return isReady()
                ? HTTPResponse(status: 200, text: "Ready.\n") : HTTPResponse(status: 503, text: "Not ready.\n")
        default:
            for route in extraRoutes {
                if let r = await route(request) { return r }
            }
            if path == "/" {
                guard readOnly else { return Self.methodNotAllowed("GET, HEAD") }
                let html = statusPage?.render() ?? landingPage
                return HTTPResponse(
                    status: 200, contentType: "text/html; charset=utf-8", body: Array(html.utf8),
                    headers: [("Cache-Control", "no-store")])
            }
            if path == "/debug/probe", let page = statusPage {
                guard readOnly else { return Self.methodNotAllowed("GET, HEAD") }
                guard let name = request.query["name"], !name.isEmpty else {
                    return HTTPResponse(status: 400, text: "missing ?name=\n")
                }
                guard let html = page.renderDebug(name: name) else {
                    return HTTPResponse(status: 404, text: "no probe named \(name) (or no round yet)\n")
                }
                return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(html.utf8))
            }
            return HTTPResponse(status: 404, text: "404 page not found\n")
        }
    }

    package static func methodNotAllowed(_ allow: String) -> HTTPResponse {
        HTTPResponse(status: 405, text: "method not allowed\n", headers: [("Allow", allow)])
    }

    var landingPage: String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>reachability_exporter</title></head>
        <body>
        <h1>reachability_exporter</h1>
        <p>Does this host reach the internet, through which uplink, and if not, why.</p>
        <ul>
        <li><a href="\(WebPaths.link(from: "/", to: paths.telemetry))">Metrics</a></li>
        <li><a href="./-/healthy">Health</a></li>
        <li><a href="./-/ready">Readiness</a></li>
        </ul>
        <p>Version \(BuildInfo.version)</p>
        </body></html>

        """
    }
}

extension WebRoutes {
    /// Routes given after the server that serves them was made (the exporter binds its port
    /// before it starts the parts the routes read): until `set`, every request gets 503.
    package final class Later: Sendable {
        private let routes = Mutex<WebRoutes?>(nil)

        package init() {}

        package func set(_ routes: WebRoutes) { self.routes.withLock { $0 = routes } }

        package func handle(_ request: HTTPRequest) async -> HTTPResponse {
            guard let routes = routes.withLock({ $0 }) else {
                return HTTPResponse(status: 503, text: "starting\n")
            }
            return await routes.handle(request)
        }
    }
}
