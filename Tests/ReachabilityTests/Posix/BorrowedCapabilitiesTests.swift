import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Who borrows capabilities from the executable file (`BorrowedCapabilities.decide`), and what a
/// configuration may ask for when they do (`ExporterOptions.borrowedMarkRefusal`).
@Suite struct BorrowedCapabilitiesTests {
    static let netRaw = BorrowedCapabilities.netRaw
    static let netAdmin: UInt64 = 1 << 12

    /// secure exec, real uid, permitted, inheritable → borrowed mask.
    static let cases: [(String, Bool, UInt32, UInt64, UInt64, UInt64)] = [
        ("a user running the setcap binary", true, 65534, netRaw, 0, netRaw),
        ("a service with AmbientCapabilities=CAP_NET_RAW (inheritable too)", true, 998, netRaw, netRaw, 0),
        ("root running the setcap binary", true, 0, ~0, 0, 0),
        ("a user without file capabilities (no secure exec)", false, 1000, 0, 0, 0),
        ("a service given caps by its unit on a plain binary", false, 998, netRaw, netRaw, 0),
        ("a file granting two, the unit only one", true, 998, netRaw | netAdmin, netRaw, netAdmin),
        ("a user holding nothing (setgid binary)", true, 1000, 0, 0, 0),
    ]

    @Test(arguments: cases)
    func decision(_ c: (String, Bool, UInt32, UInt64, UInt64, UInt64)) {
        let d = BorrowedCapabilities.decide(secureExec: c.1, realUID: c.2, permitted: c.3, inheritable: c.4)
        #expect(d.mask == c.5, "\(c.0)")
    }

    /// The test process is not run through a file capability: nothing is held, and a raw ICMP
    /// socket is opened with the thread's own rights (no raise happens).
    @Test func testProcessBorrowsNothing() {
        #expect(BorrowedCapabilities.current.isEmpty)
    }

    static let marked = """
        uplinks: [up0, up1]
        uplink_settings:
          up0: {source: 192.0.2.1}
          up1: {mark: 0x1234}
        probes:
          - {type: tcp, target: "192.0.2.10:443"}
        """

    @Test func markRefusedWhenBorrowed() throws {
        let config = try ConfigLoader.parse(Self.marked, file: "rx.yml")
        let borrowed = BorrowedCapabilities(mask: Self.netRaw)
        let refusal = try #require(ExporterOptions.borrowedMarkRefusal(config, borrowed: borrowed))
        #expect(refusal.path == "uplink_settings.up1.mark")
        #expect(refusal.found == "0x1234")
        #expect(refusal.description.hasPrefix("rx.yml: uplink_settings.up1.mark: expected no firewall mark"))
        let flags = try ConfigPrecedenceTests.flags([])
        do throws(ExporterOptions.Failure) {
            _ = try ExporterOptions.resolve(
                flags: flags, file: config, environment: ConfigPrecedenceTests.refuse,
                borrowed: borrowed)
            Issue.record("a mark was accepted with borrowed capabilities")
        } catch {
            guard case .config(let e) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(e == refusal)
        }
    }

    @Test func markAcceptedWhenOwned() throws {
        let config = try ConfigLoader.parse(Self.marked, file: "rx.yml")
        #expect(ExporterOptions.borrowedMarkRefusal(config, borrowed: BorrowedCapabilities(mask: 0)) == nil)
        let options = try ExporterOptions.resolve(
            flags: ConfigPrecedenceTests.flags([]), file: config, environment: ConfigPrecedenceTests.refuse,
            borrowed: BorrowedCapabilities(mask: 0))
        #expect(options.file?.uplinkRouting["up1"]?.mark == 0x1234)
    }

    /// Source addresses are the user's own right (any user may bind a local address).
    @Test func sourceWithoutMarkAcceptedWhenBorrowed() throws {
        let config = try ConfigLoader.parse(
            "uplink_settings:\n  up0: {source: 192.0.2.1}\nprobes:\n  - {type: tcp, target: \"192.0.2.10:443\"}\n",
            file: "rx.yml")
        #expect(ExporterOptions.borrowedMarkRefusal(config, borrowed: BorrowedCapabilities(mask: Self.netRaw)) == nil)
    }
}
