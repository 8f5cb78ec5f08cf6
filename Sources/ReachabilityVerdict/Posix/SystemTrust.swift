import Glibc

/// Where the system's trust store is, found as Go's `crypto/x509` finds it, so one binary
/// verifies certificates on every major distribution: OpenSSL's own default
/// (`SSL_CTX_set_default_verify_paths`) looks only under the directory compiled into the
/// OpenSSL it was built with (`/usr/lib/ssl` for Debian's), which other distributions lay out
/// differently, and it succeeds with no certificate at all when nothing is there.
///
/// `SSL_CERT_FILE` replaces the bundle list and `SSL_CERT_DIR` (`:`-separated) the directory
/// list, as in OpenSSL and Go; otherwise the first bundle that exists is loaded, and every
/// directory that exists is searched by hash.
package enum SystemTrust {
    /// Go's `certFiles`, in its order: Debian, Ubuntu, Arch, Gentoo; Fedora and RHEL 6; openSUSE;
    /// OpenELEC; CentOS and RHEL 7 and later; Alpine.
    package static let bundles = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/ca-bundle.pem",
        "/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem",
    ]
    /// Go's `certDirectories` of a Linux host.
    package static let directories = ["/etc/ssl/certs", "/etc/pki/tls/certs"]

    /// The bundle and the hashed directories to load; nil and empty when none exists.
    package static func locations(
        environment: [String: String], exists: (String) -> Bool
    ) -> (file: String?, directories: [String]) {
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 } ?? bundles.first(where: exists)
        let dirs =
            environment["SSL_CERT_DIR"].map { $0.split(separator: ":").map(String.init) }
            ?? directories.filter(exists)
        return (file, dirs)
    }

    /// `locations` for this process (its environment, the files as they are now).
    package static func locations() -> (file: String?, directories: [String]) {
        var environment: [String: String] = [:]
        for key in ["SSL_CERT_FILE", "SSL_CERT_DIR"] {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        return locations(environment: environment) { access($0, R_OK) == 0 }
    }
}
