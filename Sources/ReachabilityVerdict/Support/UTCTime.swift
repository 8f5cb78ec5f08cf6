/// UTC calendar arithmetic for file names and reports, in pure Swift (H. Hinnant's
/// days-from-civil algorithms): no time zone, no locale, no allocation beyond the result.
package enum UTCTime {
    /// Days since 1970-01-01 for a proleptic Gregorian date.
    package static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The date of a day number.
    package static func civil(days z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// The UTC day number of a Unix time.
    package static func day(of time: Double) -> Int { Int((time / 86_400).rounded(.down)) }

    /// `2026-01-31`.
    package static func date(day: Int) -> String {
        let c = civil(days: day)
        return "\(pad(c.year, 4))-\(pad(c.month, 2))-\(pad(c.day, 2))"
    }

    /// `2026-01-31T14:05:09Z` (whole seconds, rounded down).
    package static func rfc3339(_ time: Double) -> String {
        let whole = Int(time.rounded(.down))
        let day = Int((Double(whole) / 86_400).rounded(.down))
        let s = whole - day * 86_400
        return "\(date(day: day))T\(pad(s / 3600, 2)):\(pad(s / 60 % 60, 2)):\(pad(s % 60, 2))Z"
    }

    /// `20260131T140509.123Z`, the compact form in file names (milliseconds, rounded down).
    package static func compact(_ time: Double) -> String {
        let ms = Int((time * 1000).rounded(.down))
        let whole = Int((Double(ms) / 1000).rounded(.down))
        let day = Int((Double(whole) / 86_400).rounded(.down))
        let s = whole - day * 86_400
        let c = civil(days: day)
        return
            "\(pad(c.year, 4))\(pad(c.month, 2))\(pad(c.day, 2))T\(pad(s / 3600, 2))\(pad(s / 60 % 60, 2))\(pad(s % 60, 2)).\(pad(ms - whole * 1000, 3))Z"
    }

    /// Parses the compact form exactly (nil for anything else).
    package static func parseCompact(_ text: Substring) -> Double? {
        let b = Array(text.utf8)
        guard b.count == 20, b[8] == UInt8(ascii: "T"), b[15] == UInt8(ascii: "."), b[19] == UInt8(ascii: "Z") else {
            return nil
        }
        func number(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8), let h = number(9..<11),
            let mi = number(11..<13), let s = number(13..<15), let ms = number(16..<19),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 60
        else { return nil }
        let day = days(year: y, month: mo, day: d)
        guard civil(days: day) == (y, mo, d) else { return nil }
        return Double(day * 86_400 + h * 3600 + mi * 60 + s) + Double(ms) / 1000
    }

    private static func pad(_ v: Int, _ n: Int) -> String {
        let s = String(v)
        return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
    }
}
