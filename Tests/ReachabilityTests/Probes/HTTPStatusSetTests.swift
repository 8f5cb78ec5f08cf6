import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Status sets: one parser for the flag and the file; what each form means and what is refused.
@Suite struct HTTPStatusSetTests {
    @Test(
        arguments: [
            ("204", Set([204])),
            ("200,204", Set([200, 204])),
            (" 200 , 204 ", Set([200, 204])),
            ("200-204", Set([200, 201, 202, 203, 204])),
            ("2xx", Set(200...299)),
            ("2XX,304", Set(200...299).union([304])),
            ("200-399", Set(200...399)),
            ("599", Set([599])),
        ] as [(String, Set<Int>)])
    func parses(_ text: String, _ codes: Set<Int>) throws {
        #expect(try HTTPStatusSet.parse(text) == codes)
    }

    @Test(arguments: [
        ("", "\"\" has an empty entry"),
        ("200,", "\"200,\" has an empty entry"),
        ("99", "\"99\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
        ("600", "\"600\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
        ("6xx", "\"6xx\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
        ("2x", "\"2x\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
        ("0204", "\"0204\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
        ("399-200", "\"399-200\": a range runs from the lower code to the higher"),
        ("200-", "\"200-\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
        ("２００", "\"２００\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx"),
    ])
    func refuses(_ text: String, _ message: String) {
        #expect(throws: HTTPStatusSet.ParseError(message: message)) { try HTTPStatusSet.parse(text) }
    }

    @Test(arguments: [
        (Set([204]), "204"),
        (Set([200, 204]), "200,204"),
        (Set(200...299).union([304]), "2xx,304"),
        (Set(200...399), "200-399"),
        (Set(201...203), "201-203"),
    ])
    func formatsCompactly(_ codes: Set<Int>, _ text: String) throws {
        #expect(HTTPStatusSet.format(codes) == text)
        #expect(try HTTPStatusSet.parse(text) == codes)
    }

    /// The flag and the file accept the same forms and mean the same set.
    @Test func flagAndFileAgree() throws {
        let flags = try FlagParser(ProbeFlags.specs).parse([
            "--probe.http=http://127.0.0.1/x", "--probe.http.expect-status=200-299,304",
        ])
        _ = try ProbeFlags.probes(flags, environment: [ProbeFlags.refuseDefaultsVariable: "1"])
        let file = try ConfigLoader.parse(
            "probes:\n  - {type: http, target: \"http://127.0.0.1/x\", http: {expected_status: [2xx, \"304\"]}}\n",
            file: "t.yml")
        #expect(file.probes[0].http?.mode == .captive(HTTPExpectation(statusCodes: Set(200...299).union([304]))))
        let scalar = try ConfigLoader.parse(
            "probes:\n  - {type: http, target: \"http://127.0.0.1/x\", http: {expected_status: 200-399}}\n",
            file: "t.yml")
        #expect(scalar.probes[0].http?.mode == .captive(HTTPExpectation(statusCodes: Set(200...399))))
    }

    @Test func theFlagNamesTheProblem() {
        #expect(
            throws: UsageError(
                "invalid value \"2xx,9\" for flag '--probe.http.expect-status': \"9\" is not a status code (100–599), a range such as 200-399, or a class such as 2xx; expected codes, ranges or classes such as 204, 200,204, 200-399 or 2xx"
            )
        ) {
            let flags = try FlagParser(ProbeFlags.specs).parse([
                "--probe.http=http://127.0.0.1/x", "--probe.http.expect-status=2xx,9",
            ])
            _ = try ProbeFlags.probes(flags, environment: [ProbeFlags.refuseDefaultsVariable: "1"])
        }
    }
}
