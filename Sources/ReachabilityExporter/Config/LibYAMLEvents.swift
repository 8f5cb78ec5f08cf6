import CYAML
import ReachabilityVerdict

/// libyaml's event stream over one buffer, as Swift values: the C parser and a private copy of
/// the input live exactly as long as this object. UTF-8 only (a byte-order mark is skipped);
/// libyaml refuses invalid UTF-8 and control characters itself.
final class LibYAMLEvents {
    struct Event {
        enum Kind {
            case streamStart, streamEnd, documentStart, documentEnd
            case alias(String)
            case scalar(String, YAMLScalar.Style, tag: String?)
            case sequenceStart(tag: String?)
            case sequenceEnd
            case mappingStart(tag: String?)
            case mappingEnd
        }
        var kind: Kind
        var anchor: String?
        var mark: YAMLMark
    }

    /// A parse error as libyaml reports it: the problem, where, and what it was reading.
    struct Failure: Error {
        var problem: String
        var mark: YAMLMark
        var context: String?
        var contextMark: YAMLMark?
        /// The rest of the line from the problem's position ("" at the end of the file).
        var snippet: String
    }

    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let input: UnsafeMutableBufferPointer<UInt8>
    private var finished = false

    init(_ bytes: [UInt8]) {
        parser = .allocate(capacity: 1)
        input = .allocate(capacity: max(bytes.count, 1))
        _ = input.initialize(from: bytes)
        // Fails only when out of memory, and then the first yaml_parser_parse reports it.
        _ = yaml_parser_initialize(parser)
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, input.baseAddress, bytes.count)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
        input.deallocate()
    }

    /// The next event; after the stream's end, the stream's end again.
    func next() throws(Failure) -> Event {
        if finished { return Event(kind: .streamEnd, mark: YAMLMark(line: 0, column: 0)) }
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else { throw failure() }
        defer { yaml_event_delete(&event) }
        let mark = Self.mark(event.start_mark)
        switch event.type {
        case YAML_STREAM_START_EVENT: return Event(kind: .streamStart, mark: mark)
        case YAML_STREAM_END_EVENT:
            finished = true
            return Event(kind: .streamEnd, mark: mark)
        case YAML_DOCUMENT_START_EVENT: return Event(kind: .documentStart, mark: mark)
        case YAML_DOCUMENT_END_EVENT: return Event(kind: .documentEnd, mark: mark)
        case YAML_ALIAS_EVENT: return Event(kind: .alias(Self.string(event.data.alias.anchor) ?? ""), mark: mark)
        case YAML_SCALAR_EVENT:
            let s = event.data.scalar
            let text = s.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: s.length), as: UTF8.self) }
            let style: YAMLScalar.Style =
                switch s.style {
                case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
                case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
                case YAML_LITERAL_SCALAR_STYLE: .literal
                case YAML_FOLDED_SCALAR_STYLE: .folded
                default: .plain
                }
            return Event(
                kind: .scalar(text ?? "", style, tag: Self.string(s.tag)), anchor: Self.string(s.anchor), mark: mark)
        case YAML_SEQUENCE_START_EVENT:
            let s = event.data.sequence_start
            return Event(kind: .sequenceStart(tag: Self.string(s.tag)), anchor: Self.string(s.anchor), mark: mark)
        case YAML_SEQUENCE_END_EVENT: return Event(kind: .sequenceEnd, mark: mark)
        case YAML_MAPPING_START_EVENT:
            let m = event.data.mapping_start
            return Event(kind: .mappingStart(tag: Self.string(m.tag)), anchor: Self.string(m.anchor), mark: mark)
        case YAML_MAPPING_END_EVENT: return Event(kind: .mappingEnd, mark: mark)
        default:
            throw Failure(problem: "an event libyaml does not name", mark: mark, snippet: "")
        }
    }

    private func failure() -> Failure {
        let p = parser.pointee
        // The reader (encoding, control characters) reports a byte offset and the character;
        // the scanner and parser report a mark.
        var mark = Self.mark(p.problem_mark)
        var problem = p.problem.map { String(cString: $0) } ?? "a YAML error"
        if p.error == YAML_READER_ERROR {
            mark = self.mark(atByte: p.problem_offset)
            if problem.contains("control characters"), p.problem_value >= 0,
                let scalar = Unicode.Scalar(UInt32(p.problem_value))
            {
                problem = "the control character U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(4)
            } else {
                problem = "bytes that are not valid UTF-8"
            }
        } else if p.error == YAML_MEMORY_ERROR {
            problem = "more than the memory allows"
        }
        let context = p.context.map { String(cString: $0) }
        return Failure(
            problem: problem, mark: mark, context: context,
            contextMark: context == nil ? nil : Self.mark(p.context_mark),
            snippet: snippet(line: mark.line - 1, column: mark.column - 1))
    }

    /// 1-based line and column of a byte offset.
    private func mark(atByte offset: Int) -> YAMLMark {
        var line = 1
        var column = 1
        for i in 0..<min(offset, input.count) {
            if input[i] == 0x0A {
                line += 1
                column = 1
            } else if input[i] & 0xC0 != 0x80 {
                column += 1
            }
        }
        return YAMLMark(line: line, column: column)
    }

    /// The text from a 0-based line and column to the end of that line, for an error message.
    private func snippet(line: Int, column: Int) -> String {
        guard let start = offset(line: line, column: column) else { return "" }
        var end = start
        while end < input.count, input[end] != 0x0A, input[end] != 0x0D { end += 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: input[start..<end]), as: UTF8.self)
    }

    /// The offset of a 0-based line and column (columns count characters, as libyaml's do).
    private func offset(line: Int, column: Int) -> Int? {
        var i = 0
        var lines = 0
        while lines < line, i < input.count {
            if input[i] == 0x0A { lines += 1 }
            i += 1
        }
        var columns = 0
        while columns < column, i < input.count {
            i += 1
            while i < input.count, input[i] & 0xC0 == 0x80 { i += 1 }
            columns += 1
        }
        return i <= input.count ? i : nil
    }

    private static func mark(_ m: yaml_mark_t) -> YAMLMark { YAMLMark(line: m.line + 1, column: m.column + 1) }

    private static func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        p.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
    }
}
