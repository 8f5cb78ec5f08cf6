import ReachabilityVerdict

/// One metric the exporter serves: name, type, label names, help text and (histograms) buckets.
/// The registry registers a family from it (`MetricsRegistry.gauge(_:)` and the like).
package struct MetricDescriptor: Sendable, Equatable {
    package enum Kind: String, Sendable { case counter, gauge, histogram }

    package let kind: Kind
    package let name: String
    package let labels: [String]
    package let help: String
    package let buckets: [Double]?

    package init(_ kind: Kind, _ name: String, labels: [String], help: String, buckets: [Double]? = nil) {
        self.kind = kind
        self.name = name
        self.labels = labels
        self.help = help
        self.buckets = buckets
    }
}

/// Every metric the exporter serves, in one file: the registrations read their names, help
/// texts, labels and buckets from here, ReadmeTests check docs/metrics.md against
/// `all`, and scripts ask the binary (`reachability_exporter metrics --output=json`) instead of
/// searching the sources.
package enum MetricCatalog {
    /// RTT buckets: 50 µs doubling to ~26 s, as smokeping_prober uses.
    package static let durationBuckets = Buckets.exponential(start: 0.00005, factor: 2, count: 20)

    /// Constant labels of the file's probes; its label names are `target` plus every constant
    /// label any probe has, so it is registered afresh on each reload.
    package static let probeLabelsInfo = MetricDescriptor(
        .gauge, "reachability_probe_labels_info", labels: ["target"],
        help: "Constant labels of each probe from the configuration file, to join on target: "
            + "reachability_probe_success * on(target) group_left(site) reachability_probe_labels_info; always 1.")

    package static let exporterBuildInfo = MetricDescriptor(
        .gauge, "reachability_exporter_build_info",
        labels: ["version", "revision", "branch", "swiftversion", "os", "arch"],
        help:
            "A metric with a constant '1' value labeled by version, revision, branch, swiftversion, os and arch from which reachability_exporter was built."
    )
    package static let pathSatisfied = MetricDescriptor(
        .gauge, "reachability_path_satisfied", labels: ["family"],
        help:
            "1 when the IP family has a usable path (an up interface with carrier, an address and a default route), else 0."
    )
    package static let pathInfo = MetricDescriptor(
        .gauge, "reachability_path_info", labels: ["family", "interface", "reason"],
        help: "The path per IP family: its primary interface, or why it is unsatisfied; always 1.")
    package static let interfaceUp = MetricDescriptor(
        .gauge, "reachability_interface_up", labels: ["interface", "type"],
        help: "1 when the interface is administratively up with carrier, else 0.")
    package static let interfaceInfo = MetricDescriptor(
        .gauge, "reachability_interface_info", labels: ["interface", "type", "kind", "operstate", "expensive"],
        help: "Interfaces the path monitor sees; always 1.")
    package static let interfaceMtuBytes = MetricDescriptor(
        .gauge, "reachability_interface_mtu_bytes", labels: ["interface"],
        help: "Interface MTU.")
    package static let pathChangesTotal = MetricDescriptor(
        .counter, "reachability_path_changes_total", labels: [],
        help: "Changes of the host's network path the monitor published.")
    package static let exporterHttpRejectedConnectionsTotal = MetricDescriptor(
        .counter, "reachability_exporter_http_rejected_connections_total", labels: [],
        help: "Connections refused because max connections were in use.")
    package static let exporterHttpUnauthorizedTotal = MetricDescriptor(
        .counter, "reachability_exporter_http_unauthorized_requests_total", labels: ["reason"],
        help:
            "Requests refused by the web configuration: missing or wrong credentials (401), a check deferred under load (429), the rate limit (429), a client certificate without an allowed SAN."
    )
    package static let exporterWebConfigReloadsTotal = MetricDescriptor(
        .counter, "reachability_exporter_web_config_reloads_total", labels: ["result"],
        help: "Re-reads of --web.config.file after a change to it or a file it names, by result (success, failure).")
    package static let exporterWebConfigLastReloadSuccessful = MetricDescriptor(
        .gauge, "reachability_exporter_web_config_last_reload_successful", labels: [],
        help:
            "1 when the last read of --web.config.file succeeded (the last good settings stay in force after a failure)."
    )
    package static let processCpuSecondsTotal = MetricDescriptor(
        .counter, "process_cpu_seconds_total", labels: [],
        help: "Total user and system CPU time spent in seconds.")
    package static let processResidentMemoryBytes = MetricDescriptor(
        .gauge, "process_resident_memory_bytes", labels: [],
        help: "Resident memory size in bytes.")
    package static let processVirtualMemoryBytes = MetricDescriptor(
        .gauge, "process_virtual_memory_bytes", labels: [],
        help: "Virtual memory size in bytes.")
    package static let processOpenFds = MetricDescriptor(
        .gauge, "process_open_fds", labels: [],
        help: "Number of open file descriptors.")
    package static let processMaxFds = MetricDescriptor(
        .gauge, "process_max_fds", labels: [],
        help: "Maximum number of open file descriptors.")
    package static let processStartTimeSeconds = MetricDescriptor(
        .gauge, "process_start_time_seconds", labels: [],
        help: "Start time of the process since unix epoch in seconds.")
    package static let processThreads = MetricDescriptor(
        .gauge, "process_threads", labels: [],
        help: "Number of OS threads in the process.")
    package static let internetReachable = MetricDescriptor(
        .gauge, "reachability_internet_reachable", labels: [],
        help: "1 when the verdict is full (the internet is reachable through the routing table), else 0.")
    package static let familyInternetReachable = MetricDescriptor(
        .gauge, "reachability_family_internet_reachable", labels: ["family"],
        help: "1 when the verdict for the IP family is full, else 0.")
    package static let uplinkInternetReachable = MetricDescriptor(
        .gauge, "reachability_uplink_internet_reachable", labels: ["interface"],
        help: "1 when the verdict for the uplink (probes bound to the interface) is full, else 0.")
    package static let connectivityState = MetricDescriptor(
        .gauge, "reachability_connectivity_state", labels: ["state"],
        help: "1 for the current overall connectivity state, 0 for the others.")
    package static let familyConnectivityState = MetricDescriptor(
        .gauge, "reachability_family_connectivity_state", labels: ["family", "state"],
        help: "1 for the IP family's current connectivity state, 0 for the others.")
    package static let uplinkConnectivityState = MetricDescriptor(
        .gauge, "reachability_uplink_connectivity_state", labels: ["interface", "state"],
        help: "1 for the uplink's current connectivity state, 0 for the others.")
    package static let connectivityInfo = MetricDescriptor(
        .gauge, "reachability_connectivity_info", labels: ["scope", "state", "reason"],
        help: "The current verdict with its reason, per scope (overall, ipv4, ipv6 or an uplink interface); always 1.")
    package static let faultInfo = MetricDescriptor(
        .gauge, "reachability_fault_info", labels: ["scope", "location"],
        help:
            "Where the scope's path breaks: link, gateway, upstream, dns, portal, target (full, some targets fail) or none; always 1, one series per decided scope."
    )
    package static let faultLastHop = MetricDescriptor(
        .gauge, "reachability_fault_last_hop", labels: ["scope"],
        help:
            "While a scope is located upstream with nothing beyond its gateway answering: the distance (1 is the gateway) of the farthest router that still answers a TTL-limited echo toward a failing target (its address is in the fault detail: a label would let a forger churn series). Absent otherwise."
    )
    package static let passiveConnections = MetricDescriptor(
        .gauge, "reachability_passive_connections", labels: ["scope", "state"],
        help:
            "The host's own TCP connections to public addresses, per scope (overall, ipv4, ipv6, an uplink) and state: receiving (data within --passive.freshness), stalled (retransmitting with nothing received, or a SYN sent again), quiet. Read with NETLINK_SOCK_DIAG when --passive.mode is not off; counts only, never addresses."
    )
    package static let passiveLastReceiveAge = MetricDescriptor(
        .gauge, "reachability_passive_last_receive_age_seconds", labels: ["scope"],
        help:
            "Seconds since data last came in on any counted connection of the scope (absent when none ever received)."
    )
    package static let passiveReadSeconds = MetricDescriptor(
        .gauge, "reachability_passive_read_duration_seconds", labels: [],
        help: "How long the last read of the host's TCP sockets took (the dump and its classification).")
    package static let passiveSockets = MetricDescriptor(
        .gauge, "reachability_passive_sockets", labels: [],
        help: "TCP sockets (established or connecting) the last read saw.")
    package static let passiveStallRechecks = MetricDescriptor(
        .counter, "reachability_passive_stall_rechecks_total", labels: [],
        help: "Probe rounds started at once because a scope's connections began to stall with none receiving.")
    package static let probeTrafficBytes = MetricDescriptor(
        .counter, "reachability_probe_traffic_bytes_total", labels: ["probe", "target", "direction"],
        help:
            "Bytes the probe put on the wire (direction sent or received): whole IP packets, headers and retransmissions included; TCP counted from TCP_INFO at close, with the close's own segments estimated."
    )
    package static let probeTrafficPackets = MetricDescriptor(
        .counter, "reachability_probe_traffic_packets_total", labels: ["probe", "target", "direction"],
        help: "IP packets the probe sent or received, retransmissions included.")
    package static let uplinkTrafficBytes = MetricDescriptor(
        .counter, "reachability_uplink_traffic_bytes_total", labels: ["interface", "direction"],
        help:
            "Bytes of probe traffic charged to an interface: probes bound to it, probes through the routing table while it holds the default route, fault checks and traces on its route. Whole IP packets."
    )
    package static let uplinkTrafficPackets = MetricDescriptor(
        .counter, "reachability_uplink_traffic_packets_total", labels: ["interface", "direction"],
        help: "IP packets of probe traffic charged to an interface (see reachability_uplink_traffic_bytes_total).")
    package static let uplinkProbeInterval = MetricDescriptor(
        .gauge, "reachability_uplink_probe_interval_seconds", labels: ["interface", "cause"],
        help:
            "How often the uplink's own probes run now (uplinks with an interval or a budget): cause interval (its own or the global one), budget (stretched so the budget lasts the window) or exhausted (spent: nothing runs until the window ends)."
    )
    package static let uplinkBudgetBytes = MetricDescriptor(
        .gauge, "reachability_uplink_budget_bytes", labels: ["interface"],
        help: "The uplink's traffic budget per window (uplink_settings budget).")
    package static let uplinkBudgetRemainingBytes = MetricDescriptor(
        .gauge, "reachability_uplink_budget_remaining_bytes", labels: ["interface"],
        help: "What is left of the uplink's budget in the current window.")
    package static let uplinkBudgetWindowEnd = MetricDescriptor(
        .gauge, "reachability_uplink_budget_window_end_timestamp_seconds", labels: ["interface"],
        help: "Unix time the uplink's current budget window ends (the budget starts over then).")
    package static let nat64PrefixInfo = MetricDescriptor(
        .gauge, "reachability_nat64_prefix_info", labels: ["prefix"],
        help:
            "A NAT64 prefix of this network (RFC 7050, learned when a DNS answer needed it); always 1. Addresses inside it stand for the IPv4 addresses they embed."
    )
    package static let pathMtuBytes = MetricDescriptor(
        .gauge, "reachability_path_mtu_bytes", labels: ["target"],
        help:
            "Path MTU an mtu probe measured this round: the largest don't-fragment echo (IP packet bytes) that came back; absent when none did."
    )
    package static let stateTransitionsTotal = MetricDescriptor(
        .counter, "reachability_state_transitions_total", labels: ["from", "to"],
        help: "Overall connectivity state changes.")
    package static let lastTransitionTimestampSeconds = MetricDescriptor(
        .gauge, "reachability_last_transition_timestamp_seconds", labels: [],
        help: "When the overall state last changed, Unix seconds.")
    package static let stateSinceTimestampSeconds = MetricDescriptor(
        .gauge, "reachability_state_since_timestamp_seconds", labels: ["scope"],
        help: "When the scope's current state began, Unix seconds.")
    package static let roundsTotal = MetricDescriptor(
        .counter, "reachability_rounds_total", labels: [],
        help: "Probe rounds completed.")
    package static let roundDurationSeconds = MetricDescriptor(
        .histogram, "reachability_round_duration_seconds", labels: [],
        help: "Wall time of whole probe rounds (including stagger).",
        buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60])
    package static let probeSuccess = MetricDescriptor(
        .gauge, "reachability_probe_success", labels: ["probe", "target"],
        help: "1 if the probe's last round succeeded, else 0.")
    package static let probePortal = MetricDescriptor(
        .gauge, "reachability_probe_portal", labels: ["probe", "target"],
        help: "1 if the probe's last round saw a captive-portal signal, else 0.")
    package static let probeDurationSeconds = MetricDescriptor(
        .histogram, "reachability_probe_duration_seconds", labels: ["probe", "target"],
        help: "Round trip of successful probes (each ICMP echo is one observation).",
        buckets: durationBuckets)
    package static let probeLastDurationSeconds = MetricDescriptor(
        .gauge, "reachability_probe_last_duration_seconds", labels: ["probe", "target"],
        help: "Wall time of the probe's last round, success or not.")
    package static let probesTotal = MetricDescriptor(
        .counter, "reachability_probes_total", labels: ["probe", "target"],
        help: "Probe rounds run.")
    package static let probeFailuresTotal = MetricDescriptor(
        .counter, "reachability_probe_failures_total", labels: ["probe", "target", "reason"],
        help: "Probe rounds that failed, by reason.")
    package static let probePortalSignalsTotal = MetricDescriptor(
        .counter, "reachability_probe_portal_signals_total", labels: ["probe", "target", "reason"],
        help: "Probe rounds that saw a captive-portal signal, by reason.")
    package static let probePhaseDurationSeconds = MetricDescriptor(
        .gauge, "reachability_probe_phase_duration_seconds", labels: ["probe", "target", "phase"],
        help: "Duration of each phase of the probe's last round (resolve, connect, tls, processing, transfer, rtt).")
    package static let icmpLossRatio = MetricDescriptor(
        .gauge, "reachability_icmp_loss_ratio", labels: ["target"],
        help: "Share of echo requests in the last round that got no reply.")
    package static let icmpReplyTtl = MetricDescriptor(
        .gauge, "reachability_icmp_reply_ttl", labels: ["target"],
        help: "TTL (IPv4) or hop limit (IPv6) of the last echo reply.")
    package static let icmpReplyHops = MetricDescriptor(
        .gauge, "reachability_icmp_reply_hops", labels: ["target"],
        help:
            "Routers the last echo reply crossed, estimated from its TTL (initial 64, 128 or 255); 0 for a target beyond the gateway means the path answered in its place (forged_reply)."
    )
    package static let icmpEchoRequestsTotal = MetricDescriptor(
        .counter, "reachability_icmp_echo_requests_total", labels: ["target"],
        help: "Echo requests sent.")
    package static let icmpEchoRepliesTotal = MetricDescriptor(
        .counter, "reachability_icmp_echo_replies_total", labels: ["target"],
        help: "Echo replies received.")
    package static let httpStatusCode = MetricDescriptor(
        .gauge, "reachability_http_status_code", labels: ["probe", "target"],
        help: "HTTP status code of the last response (0 if none).")
    package static let tlsCertificateExpiryTimestampSeconds = MetricDescriptor(
        .gauge, "reachability_tls_certificate_expiry_timestamp_seconds", labels: ["target"],
        help: "When the server's leaf certificate expires, Unix seconds.")
    package static let dnsAnswers = MetricDescriptor(
        .gauge, "reachability_dns_answers", labels: ["target"],
        help: "Answer records in the last DNS response.")
    package static let dnsRcode = MetricDescriptor(
        .gauge, "reachability_dns_rcode", labels: ["target"],
        help: "Response code of the last DNS response (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED).")
    package static let probeInfo = MetricDescriptor(
        .gauge, "reachability_probe_info", labels: ["probe", "target", "destination", "interface"],
        help: "Configured probes; always 1.")
    package static let schedulerLatenessSeconds = MetricDescriptor(
        .histogram, "reachability_scheduler_lateness_seconds", labels: [],
        help: "How late probes start against their scheduled (staggered) slot.",
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])
    package static let exporterConfigLastReloadSuccessful = MetricDescriptor(
        .gauge, "reachability_exporter_config_last_reload_successful", labels: [],
        help: "Whether the last configuration reload attempt was successful (1) or not (0).")
    package static let exporterConfigLastReloadSuccessTimestampSeconds = MetricDescriptor(
        .gauge, "reachability_exporter_config_last_reload_success_timestamp_seconds", labels: [],
        help: "Timestamp of the last successful configuration load or reload, Unix seconds.")
    package static let historyWriteErrorsTotal = MetricDescriptor(
        .counter, "reachability_history_write_errors_total", labels: [],
        help: "Failed history file operations (open, write, sync, rotate, delete); each is logged once per condition.")
    package static let historyDroppedRecordsTotal = MetricDescriptor(
        .counter, "reachability_history_dropped_records_total", labels: [],
        help: "History records lost: the write queue was full or the write failed.")
    package static let historyCorruptRecordsTotal = MetricDescriptor(
        .counter, "reachability_history_corrupt_records_total", labels: [],
        help: "History lines skipped as corrupt while reading (torn final lines, garbage).")
    package static let historyRecordsWrittenTotal = MetricDescriptor(
        .counter, "reachability_history_records_written_total", labels: [],
        help: "History records written.")
    package static let historyBytes = MetricDescriptor(
        .gauge, "reachability_history_bytes", labels: [],
        help: "Total size of the history files.")
    package static let historyFiles = MetricDescriptor(
        .gauge, "reachability_history_files", labels: [],
        help: "Number of history files.")
    package static let availabilityRatio = MetricDescriptor(
        .gauge, "reachability_availability_ratio", labels: ["window"],
        help:
            "Share of the covered time in the window during which the overall verdict was full (NaN when nothing is covered); from the history, so it survives restarts."
    )
    package static let historyCoverageRatio = MetricDescriptor(
        .gauge, "reachability_history_coverage_ratio", labels: ["window"],
        help: "Share of the window covered by the history (time the exporter was not running is a gap).")

    /// The families with a series per probe, found by their `target` label: what a probe removed
    /// by a reload loses (`MetricsRecorder`), so a family added above is forgotten with the rest.
    /// Not `probeLabelsInfo`, which `ProbeLabelsMetric` rewrites whole from the probes it is given.
    package static let perProbe: [MetricDescriptor] = all.filter {
        $0.labels.contains("target") && $0.name != probeLabelsInfo.name
    }

    /// Every metric above, in the order the sources register them.
    package static let all: [MetricDescriptor] =
        [
            exporterBuildInfo,
            exporterHttpUnauthorizedTotal,
            exporterWebConfigReloadsTotal,
            exporterWebConfigLastReloadSuccessful,
            pathSatisfied,
            pathInfo,
            interfaceUp,
            interfaceInfo,
            interfaceMtuBytes,
            pathChangesTotal,
            exporterHttpRejectedConnectionsTotal,
            processCpuSecondsTotal,
            processResidentMemoryBytes,
            processVirtualMemoryBytes,
            processOpenFds,
            processMaxFds,
            processStartTimeSeconds,
            processThreads,
            internetReachable,
            familyInternetReachable,
            uplinkInternetReachable,
            connectivityState,
            familyConnectivityState,
            uplinkConnectivityState,
            connectivityInfo,
            faultInfo,
            faultLastHop,
            passiveConnections, passiveLastReceiveAge, passiveReadSeconds, passiveSockets, passiveStallRechecks,
            probeTrafficBytes, probeTrafficPackets, uplinkTrafficBytes, uplinkTrafficPackets, uplinkProbeInterval,
            uplinkBudgetBytes, uplinkBudgetRemainingBytes, uplinkBudgetWindowEnd,
            pathMtuBytes,
            stateTransitionsTotal,
            lastTransitionTimestampSeconds,
            stateSinceTimestampSeconds,
            roundsTotal,
            roundDurationSeconds,
            probeSuccess,
            probePortal,
            probeDurationSeconds,
            probeLastDurationSeconds,
            probesTotal,
            probeFailuresTotal,
            probePortalSignalsTotal,
            probePhaseDurationSeconds,
            icmpLossRatio,
            icmpReplyTtl, icmpReplyHops, nat64PrefixInfo,
            icmpEchoRequestsTotal,
            icmpEchoRepliesTotal,
            httpStatusCode,
            tlsCertificateExpiryTimestampSeconds,
            dnsAnswers,
            dnsRcode,
            probeInfo,
            schedulerLatenessSeconds,
            exporterConfigLastReloadSuccessful,
            exporterConfigLastReloadSuccessTimestampSeconds,
            historyWriteErrorsTotal,
            historyDroppedRecordsTotal,
            historyCorruptRecordsTotal,
            historyRecordsWrittenTotal,
            historyBytes,
            historyFiles,
            availabilityRatio,
            historyCoverageRatio,
            probeLabelsInfo,
        ] + captivePortalMetrics
}
