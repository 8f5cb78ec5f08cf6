extension Substring {
    /// Without spaces and tabs at either end (HTTP's optional whitespace, list items).
    package var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
