import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// #45 groundwork: the trust store found where each distribution keeps it, as Go finds it.
@Suite struct SystemTrustTests {
    @Test func theFirstBundleThatExistsAndEveryDirectory() {
        let rhel: Set = ["/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/pki/tls/certs"]
        let found = SystemTrust.locations(environment: [:]) { rhel.contains($0) }
        #expect(found.file == "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")
        #expect(found.directories == ["/etc/pki/tls/certs"])
        let debian: Set = ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs", "/etc/ssl/cert.pem"]
        #expect(
            SystemTrust.locations(environment: [:]) { debian.contains($0) }.file == "/etc/ssl/certs/ca-certificates.crt"
        )
        let none = SystemTrust.locations(environment: [:]) { _ in false }
        #expect(none.file == nil && none.directories.isEmpty)
    }

    @Test func theEnvironmentReplacesTheLists() {
        let env = ["SSL_CERT_FILE": "/lab/ca.pem", "SSL_CERT_DIR": "/a:/b"]
        let found = SystemTrust.locations(environment: env) { _ in true }
        #expect(found.file == "/lab/ca.pem" && found.directories == ["/a", "/b"])
        let empty = SystemTrust.locations(environment: ["SSL_CERT_FILE": ""]) { $0 == "/etc/ssl/cert.pem" }
        #expect(empty.file == "/etc/ssl/cert.pem", "an empty SSL_CERT_FILE is no file")
    }
}
