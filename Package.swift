// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "reachability_exporter",
    products: [
        .library(name: "Reachability", targets: ["Reachability"]),
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
        .target(name: "Reachability", dependencies: ["CShim", "COpenSSL", "CZlib", "CCrypt", "CYAML", "CPCRE2"]),
        .executableTarget(name: "reachability_exporter", dependencies: ["Reachability"]),
        // Benchmark drivers (bench/*.sh); not installed.
        .executableTarget(name: "reachability-bench", dependencies: ["Reachability"]),
        // ICMP load generator for bench/icmp_bench.sh (CPU per probe vs smokeping_prober).
        .executableTarget(name: "icmp-bench", dependencies: ["Reachability"]),
        // Fakes and loopback servers shared by the tests and benchmarks.
        .target(name: "ReachabilityTestSupport", dependencies: ["Reachability", "CShim", "COpenSSL"]),
        // The fault lab's upstream services (scripts/lab fault); not a product.
        .executableTarget(name: "reachability-lab", dependencies: ["Reachability", "ReachabilityTestSupport", "CShim"]),
        // Hidden benchmark driver for bench/http_bench.sh (not a product).
        .executableTarget(name: "http_probe_bench", dependencies: ["Reachability"], path: "bench/http_probe_bench"),
        // Hidden driver for bench/history_bench.sh: writes a synthetic month of history.
        .executableTarget(name: "history_bench", dependencies: ["Reachability", "ReachabilityTestSupport"], path: "bench/history_bench"),
        // The README's library example (scripts/test also type-checks it against the public API alone).
        .executableTarget(name: "reachability-example", dependencies: ["Reachability"], path: "Examples/EmbedReachability"),
        .testTarget(
            name: "ReachabilityTests", dependencies: ["Reachability", "ReachabilityTestSupport", "CShim", "CZlib"],
            exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
