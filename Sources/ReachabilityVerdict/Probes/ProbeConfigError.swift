/// A probe setting that cannot work: which one (`field`) and why, for a person
/// (`tcp target "example.com:99999": port must be 1–65535`). Every prober's configuration
/// throws it from its validating initialiser; the configuration file's loader points at the
/// field's key (`field.key`, below the probe) and says what it expects (`field.expected`); the
/// command line and the library show `description`.
package struct ProbeConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    package let field: ProbeField
    package let message: String
    /// A name that heads `description` (the HTTP prober's own names for its settings: `url`,
    /// `headers`, …); nil when the message names the setting itself.
    package let heading: String?

    package init(_ field: ProbeField, _ message: String, heading: String? = nil) {
        self.field = field
        self.message = Redaction.userinfo(in: message)
        self.heading = heading
    }

    /// The same message, about another field (a proxy URL parsed for `http.proxy_url`, say).
    package func about(_ field: ProbeField) -> ProbeConfigError { ProbeConfigError(field, message, heading: heading) }

    package var description: String { heading.map { "\($0): \(message)" } ?? message }
}

/// A setting of a probe: its configuration file key below the probe (`dns.server`) and what it
/// expects, for the file's error messages ("expected …"). The settings every kind shares are
/// here; each kind names its own in its folder, beside its configuration.
package struct ProbeField: Sendable, Equatable {
    /// The configuration file's key of the setting, below the probe (`dns.server`).
    package let key: String
    /// What the setting expects ("a port 1-65535").
    package let expected: String

    /// A setting at `key` that expects `expected`.
    package init(_ key: String, expected: String) {
        self.key = key
        self.expected = expected
    }

    /// The probe's target.
    package static let target = ProbeField("target", expected: "a target this probe type can use")
    /// The family the probe is pinned to.
    package static let family = ProbeField("family", expected: "a family that admits the target")
    /// The interface the probe is bound to (an uplink).
    package static let interface = ProbeField("interface", expected: "an interface name")
}

extension ProbeConfigError {
    /// Checks an interface name for SO_BINDTODEVICE (`InterfaceName`).
    package static func checkInterface(_ name: String?) throws(ProbeConfigError) {
        guard let name, let problem = InterfaceName.problem(name) else { return }
        throw ProbeConfigError(.interface, "interface \(name.debugDescription): \(problem)")
    }
}

/// A prober configuration built without throwing (ICMP, MTU) that validates on demand.
package protocol ValidatedProbeConfiguration {
    /// Throws the first setting that cannot work, with its field.
    func validate() throws(ProbeConfigError)
}

extension ValidatedProbeConfiguration {
    /// What is wrong with this configuration, or nil if it is usable. Config loading reports it
    /// up front; a prober given a bad configuration fails each round with it.
    package var problem: String? {
        do throws(ProbeConfigError) {
            try validate()
            return nil
        } catch {
            return error.message
        }
    }
}
