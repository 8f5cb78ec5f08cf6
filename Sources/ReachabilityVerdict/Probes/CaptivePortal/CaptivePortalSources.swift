/// Where the captive-portal API of an interface was learned (RFC 8910), in the order one
/// source wins over the next: the operator's configuration, then DHCPv4 (option 114), DHCPv6
/// (option 103), systemd-networkd's record (which merges its own DHCP and RA), a hook's record
/// of an RA, and the Router Advertisements this exporter reads itself (option 37).
package enum CaptivePortalSource: String, Sendable, CaseIterable, Codable {
    case config
    case dhcp4
    case dhcp6
    case networkd
    case ra
}

/// How this exporter learns and reads captive-portal APIs (`captive_portal:` in the file).
package struct CaptivePortalSettings: Sendable, Equatable {
    /// False: no API is learned or read (the probes alone decide, as before).
    package var enabled = true
    /// The hook files: `<dir>/<interface>.dhcp4`, `.dhcp6`, `.ra`, each the URI on its first line.
    package var directory = CaptivePortalSettings.defaultDirectory
    /// Trust for the API's certificate instead of the system's (a lab's, a venue's private CA).
    package var caFile: String?
    /// Per interface, an API the operator knows (wins over what the network announces).
    package var api: [String: String] = [:]
    /// Where systemd-networkd (v254 and later) records `CAPTIVE_PORTAL=` per interface index.
    package var networkdDirectory = "/run/systemd/netif/links"

    package static let defaultDirectory = "/run/reachability_exporter/captive-portal"

    package init() {}
}

/// Reads what the network announced for an interface from every source, cheaply enough for
/// every round (a few small files): the first source that has a URI wins.
package enum CaptivePortalSources {
    /// A hook or state file is read up to this many bytes (a URI is at most 2,048).
    package static let fileLimit = 4096

    /// The URI for `interface` and its source; a URI that is not an `https` URI RFC 8908 allows
    /// comes back as the problem instead (then nothing is fetched, and the state says why).
    /// `ignored` gathers the hook files that exist but cannot be trusted (then the next source
    /// is asked, as if they were absent).
    package static func find(
        interface: String, index: Int?, announced: RouterAnnouncement?, settings: CaptivePortalSettings,
        ignored: inout [String]
    ) -> (source: CaptivePortalSource, uri: Result<ProbeURL, CaptivePortalProblem>)? {
        func hookFile(_ directory: String, _ name: String) -> String? {
            Self.hookFile(directory, name, ignored: &ignored)
        }
        var found: (CaptivePortalSource, String)?
        if let uri = settings.api[interface] {
            found = (.config, uri)
        } else if let uri = hookFile(settings.directory, interface + ".dhcp4") {
            found = (.dhcp4, uri)
        } else if let uri = hookFile(settings.directory, interface + ".dhcp6") {
            found = (.dhcp6, uri)
        } else if let index, let uri = networkd(settings.networkdDirectory, index: index) {
            found = (.networkd, uri)
        } else if let uri = hookFile(settings.directory, interface + ".ra") ?? announced?.captivePortalAPI {
            found = (.ra, uri)
        }
        guard let (source, text) = found else { return nil }
        return (source, check(text))
    }

    /// An API URI as RFC 8908 §2 wants it: `https`, a host, no user information.
    package static func check(_ text: String) -> Result<ProbeURL, CaptivePortalProblem> {
        guard CaptivePortalURIOption.uri(Array(text.utf8)) != nil,
            text.utf8.allSatisfy(CaptivePortalAnswer.isURICharacter)
        else {
            return .failure(
                CaptivePortalProblem(
                    .uri,
                    "the announced URI is empty, over 2048 bytes, or holds spaces, control characters or characters RFC 3986 keeps out of URIs"
                ))
        }
        guard text.lowercased().hasPrefix("https://") else {
            return .failure(CaptivePortalProblem(.uri, "the announced URI is not https (RFC 8908 requires TLS)"))
        }
        do throws(ProbeURL.ParseError) {
            return .success(try ProbeURL(text))
        } catch {
            return .failure(CaptivePortalProblem(.uri, "the announced URI cannot be read: \(error.message)"))
        }
    }

    /// The first line of a hook file, when the file can be trusted (`FileContents.readTrusted`).
    package static func hookFile(_ directory: String, _ name: String, ignored: inout [String]) -> String? {
        let bytes: [UInt8]
        do throws(Errno) {
            bytes = try FileContents.readTrusted(directory, name, limit: fileLimit)
        } catch {
            // Absent (or its directory absent) is silence; anything else there is ignored, and said.
            if !FileContents.isAbsent(error) { ignored.append(directory + "/" + name) }
            return nil
        }
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        guard !line.isEmpty else { return nil }
        return String(decoding: line, as: UTF8.self)
    }

    /// systemd-networkd's `CAPTIVE_PORTAL=` for a link (`sd_network_link_get_captive_portal`
    /// reads the same key of the same file).
    package static func networkd(_ directory: String, index: Int) -> String? {
        guard let bytes = try? FileContents.read("\(directory)/\(index)", limit: 64 << 10) else { return nil }
        let key = Array("CAPTIVE_PORTAL=".utf8)
        for line in bytes.split(separator: 0x0A) where line.starts(with: key) {
            let value = line.dropFirst(key.count)
            return value.isEmpty ? nil : String(decoding: value, as: UTF8.self)
        }
        return nil
    }
}
