// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "reachability_exporter",
    // The library builds and runs on Linux only (Glibc, netlink, ICMP sockets: docs/library.md).
    // SwiftPM declares Apple minimums alone; macOS 15 is the first with Synchronization's Mutex,
    // named so a resolver says so, not a claim that it builds there.
    platforms: [.macOS(.v15)],
    products: [
        // What an app embeds: the path monitor, probes, verdicts and the status stream.
        .library(name: "ReachabilityVerdict", targets: ["ReachabilityVerdict"]),
        .executable(name: "reachability_exporter", targets: ["reachability_exporter"]),
    ],
    targets: [
        // Kernel and libc definitions Glibc does not import (netlink, ICMP, epoll, CMSG_*).
        .target(name: "CShim"),
        // OpenSSL from the system (Debian libssl-dev) for HTTPS probes.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // zlib from the system (Debian zlib1g-dev): gzip for /metrics.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libcrypt from the system (Debian libcrypt-dev): bcrypt for basic-auth passwords.
        .systemLibrary(name: "CCrypt", pkgConfig: "libcrypt", providers: [.apt(["libcrypt-dev"])]),
        // libyaml from the system (Debian libyaml-dev): the parser for every YAML file read.
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // PCRE2 from the system (Debian libpcre2-dev): blackbox modules' regular expressions, by DFA.
        .systemLibrary(name: "CPCRE2", pkgConfig: "libpcre2-8", providers: [.apt(["libpcre2-dev"])]),
        // The library: path monitor, probes, verdicts, the status stream. Links OpenSSL (HTTPS
        // probes) and PCRE2 (blackbox modules' body and header patterns) and nothing else.
        .target(name: "ReachabilityVerdict", dependencies: ["CShim", "COpenSSL", "CPCRE2"]),
        // The exporter on top: metrics and history, the config file, the web server, the commands.
        .target(
            name: "ReachabilityExporter",
            dependencies: ["ReachabilityVerdict", "CShim", "COpenSSL", "CZlib", "CCrypt", "CYAML", "CPCRE2"]),
        .executableTarget(name: "reachability_exporter", dependencies: ["ReachabilityExporter"]),
        // Benchmark drivers (bench/*.sh); not installed.
        .executableTarget(name: "reachability-bench", dependencies: ["ReachabilityExporter"]),
        // ICMP load generator for bench/icmp_bench.sh (CPU per probe vs smokeping_prober).
        .executableTarget(name: "icmp-bench", dependencies: ["ReachabilityVerdict"]),
        // Fakes and loopback servers shared by the tests and benchmarks.
        .target(name: "ReachabilityTestSupport", dependencies: ["ReachabilityExporter", "ReachabilityVerdict", "CShim", "COpenSSL"]),
        // The fault lab's upstream services (scripts/lab fault); not a product.
        .executableTarget(name: "reachability-lab", dependencies: ["ReachabilityExporter", "ReachabilityVerdict", "ReachabilityTestSupport", "CShim"]),
        // Hidden benchmark driver for bench/http_bench.sh (not a product).
        .executableTarget(name: "http_probe_bench", dependencies: ["ReachabilityVerdict"], path: "bench/http_probe_bench"),
        // Hidden driver for bench/history_bench.sh: writes a synthetic month of history.
        .executableTarget(
            name: "history_bench", dependencies: ["ReachabilityExporter", "ReachabilityVerdict", "ReachabilityTestSupport"], path: "bench/history_bench"),
        // The README's library example (scripts/test also type-checks it against the public API alone).
        .executableTarget(name: "reachability-example", dependencies: ["ReachabilityVerdict"], path: "Examples/EmbedReachability"),
        .testTarget(
            name: "ReachabilityTests",
            dependencies: ["ReachabilityVerdict", "ReachabilityExporter", "ReachabilityTestSupport", "CShim", "CZlib"],
            exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
