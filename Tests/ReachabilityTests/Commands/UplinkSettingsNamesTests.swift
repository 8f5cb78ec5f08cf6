import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Found by a hostile review (#41): an `uplink_settings` key naming no uplink (a typo) was
/// accepted and its budget applied to nothing.
@Suite struct UplinkSettingsNamesTests {
    static let probe = "probes:\n  - {name: a, type: tcp, target: \"127.0.0.1:1\"}\n"
    static let settings = "uplink_settings:\n  wwan1: {budget: 200MB}\n"

    @Test func aKeyThatNamesNoListedUplinkIsRefusedWithTheKey() throws {
        let listed = "uplinks: [eth0, wwan0]\n" + Self.settings + Self.probe
        #expect(
            ConfigSchemaTests.error(listed)
                == "t.yml:3:3: uplink_settings.wwan1: expected an uplink (uplinks: eth0, wwan0), found \"wwan1\", not an uplink (its settings would apply to nothing; list it in uplinks: or fix the name)"
        )
        #expect(ConfigSchemaTests.error(listed.replacingOccurrences(of: "wwan0]", with: "wwan1]")) == nil)
        // No uplinks at all is a list too (empty).
        #expect(ConfigSchemaTests.error(Self.settings + Self.probe)?.contains("(uplinks: none)") == true)
        // The command line's --probe.uplink replaces the file's list, and is checked the same.
        let flagged = try ConfigPrecedenceTests.failure(
            "uplinks: [wwan1]\n" + Self.settings + Self.probe, ["--probe.uplink=eth0"])
        #expect(flagged.hasPrefix("config: rx.yml:3:3: uplink_settings.wwan1: expected an uplink (uplinks: eth0)"))
    }

    @Test func underAutoItIsAWarningNamingTheKey() throws {
        let options = try ConfigPrecedenceTests.setup("uplinks: auto\n" + Self.settings + Self.probe)
        #expect(
            options.uplinkSettingsWarning(adopted: ["eth0"])
                == "uplink_settings.wwan1: not an uplink now (uplinks: auto, now eth0); its settings apply only once it holds a default route"
        )
        #expect(options.uplinkSettingsWarning(adopted: ["eth0", "wwan1"]) == nil)
    }
}
