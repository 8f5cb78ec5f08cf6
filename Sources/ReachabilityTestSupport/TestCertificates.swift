import Foundation
import Synchronization

/// A throwaway PKI made with the `openssl` command in a temp directory (removed at process exit):
/// a CA, and server certificates that are valid for localhost/127.0.0.1/::1, carry the wrong
/// host name, are expired (`-days -1`), or are self-signed. Made once per test process.
package struct TestCertificates: Sendable {
    /// A certificate and its key, as PEM file paths.
    package struct Pair: Sendable {
        package let certificate: String
        package let key: String

        /// The pair as a server identity for `LoopbackHTTPServer`.
        package func identity() throws -> LoopbackTLSIdentity {
            try LoopbackTLSIdentity(certificateFile: certificate, keyFile: key)
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let directory: String
    /// The CA certificate that signed `valid`, `wrongHost` and `expired`.
    package let caFile: String
    package let valid: Pair
    package let wrongHost: Pair
    package let expired: Pair
    package let selfSigned: Pair
    /// A client certificate (extendedKeyUsage clientAuth) signed by the CA, SAN `prometheus.rx-test`.
    package let client: Pair

    private static let made = Mutex<Result<TestCertificates, Failure>?>(nil)

    /// The process-wide set, made on first use.
    package static func shared() throws -> TestCertificates {
        try made.withLock { cached in
            let result = cached ?? Result { () throws(Failure) in try make() }
            cached = result
            return try result.get()
        }
    }

    private static func make() throws(Failure) -> TestCertificates {
        let template = "/tmp/rx-test-certs-XXXXXX"
        var path = Array(template.utf8CString)
        guard let dir = mkdtemp(&path) else { throw Failure(description: "mkdtemp failed") }
        let directory = String(cString: dir)
        certificateDirectory.withLock { $0 = directory }
        atexit {
            if let dir = certificateDirectory.withLock({ $0 }) { _ = try? FileManager.default.removeItem(atPath: dir) }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { throw Failure(description: "cannot run openssl: \(error)") }
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl failed: \(String(decoding: stderr, as: UTF8.self))")
        }
        func pair(_ name: String) -> Pair {
            Pair(certificate: "\(directory)/\(name).pem", key: "\(directory)/\(name).key")
        }
        return TestCertificates(
            directory: directory, caFile: "\(directory)/ca.pem", valid: pair("valid"),
            wrongHost: pair("wronghost"), expired: pair("expired"), selfSigned: pair("self"), client: pair("client"))
    }

    private static let script = """
        set -e
        K="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        openssl req -x509 $K -keyout ca.key -out ca.pem -days 3 -subj /CN=rx-test-ca \
          -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
        leaf() {
          openssl req -new $K -keyout $1.key -out $1.csr -subj /CN=$4
          printf 'subjectAltName=%s\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=%s\\n' "$3" "${5:-serverAuth}" > $1.ext
          openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days $2 -extfile $1.ext -out $1.pem
        }
        leaf valid 2 "DNS:localhost,IP:127.0.0.1,IP:::1" localhost
        leaf wronghost 2 "DNS:wrong.example" wrong.example
        leaf expired -1 "DNS:localhost,IP:127.0.0.1,IP:::1" localhost
        leaf client 2 "DNS:prometheus.rx-test,email:prometheus@rx-test" prometheus clientAuth
        openssl req -x509 $K -keyout self.key -out self.pem -days 2 -subj /CN=localhost \
          -addext subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1
        """
}

/// Where the certificates went, for the exit-time cleanup (a C callback cannot capture).
private let certificateDirectory = Mutex<String?>(nil)
