import Glibc

/// Numeric text for 4- or 16-byte addresses (`inet_ntop`).
package enum IPText {
    package static func format(_ bytes: [UInt8]) -> String {
        let family = bytes.count == 16 ? AF_INET6 : AF_INET
        guard bytes.count == 4 || bytes.count == 16 else { return "?" }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) != nil }
        guard ok else { return "?" }
        return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
