/// One kind of probe as everything outside its folder knows it: the `type:` names it answers to,
/// its section of a `probes:` entry, what its target is, its command-line flag, the verdict
/// policy group it belongs to and what its success can show when nothing else is known.
///
/// `ProbeType.kind` is the one table (as blackbox_exporter's `Probers` map): the configuration
/// schema, the flags, the evidence, the verdict policies and the history reader read it, so a
/// new `ProbeType` case is a compiler error until it has its kind, and nothing else lists kinds.
package struct ProbeKind: Sendable {
    /// The `type:` values (and `type` labels) of this kind: `http` and `https` for the HTTP kind.
    package let types: [ProbeType]
    /// The key of its options section in a `probes:` entry (`http`, `icmp`).
    package let section: String
    /// Its command-line flag (`probe.icmp`), the flag's placeholder and help.
    package let flag: (name: String, placeholder: String, help: String)
    /// Which `--probe.mode` group counts it (`http`, `icmp`), nil when only `parallel` and
    /// `quorum` do.
    package let policyGroup: PolicyGroup?
    /// The best evidence a success can give when its configuration says nothing more (see
    /// `Evidence`): `local` for DNS, `internet` for the others.
    package let typicalEvidence: Evidence
    /// Its one validated configuration: what its section of a `probes:` entry decodes into,
    /// and what builds its prober.
    package let configuration: any ProbeConfiguration.Type
    /// What its target is, by type, for errors and docs (`an https:// URL`).
    private let targets: [ProbeType: String]

    /// A kind answering to `types`; `targets` says what the target is for each type.
    package init(
        _ types: [ProbeType], section: String, flag: (name: String, placeholder: String, help: String),
        policyGroup: PolicyGroup?, typicalEvidence: Evidence, configuration: any ProbeConfiguration.Type,
        targets: [ProbeType: String]
    ) {
        precondition(types.allSatisfy { targets[$0] != nil }, "a target text for every type of the kind")
        self.types = types
        self.section = section
        self.flag = flag
        self.policyGroup = policyGroup
        self.typicalEvidence = typicalEvidence
        self.configuration = configuration
        self.targets = targets
    }

    /// What the target of a probe of `type` (one of `types`) is: `host:port`, `an http:// URL`.
    package func targetText(_ type: ProbeType) -> String { targets[type] ?? targets[types[0]]! }

    /// The groups of `--probe.mode`'s single-kind policies.
    package enum PolicyGroup: String, Sendable {
        /// `--probe.mode=http`: only HTTP and HTTPS probes count.
        case http
        /// `--probe.mode=icmp`: only ICMP probes (echo and MTU) count.
        case icmp
    }

    /// Every kind, in the order the docs and `--help` list them.
    package static let all: [ProbeKind] = [.http, .icmp, .dns, .tcp, .mtu, .doh]
}

extension ProbeType {
    /// The kind of probe this type is (the table every list of kinds reads).
    package var kind: ProbeKind {
        switch self {
        case .http, .https: .http
        case .icmp: .icmp
        case .mtu: .mtu
        case .dns: .dns
        case .tcp: .tcp
        case .doh: .doh
        }
    }
}
