import ReachabilityVerdict
import Synchronization

/// Where uplink budgets keep their counts across restarts: `budgets` in the history directory
/// (a line per uplink, replaced whole at most once a minute). Without a history directory the
/// counts live in memory and a restart starts the window's count at zero (logged).
enum BudgetStore {
    static let fileName = "budgets"
    static let limit = 64 * 1024

    static func book(directory: String?, logger: Logger) -> BudgetBook {
        guard let directory else { return BudgetBook() }
        let path = directory + "/" + fileName
        var restored: [String: BudgetBook.Account] = [:]
        do throws(DirectoryHandle.Refusal) {
            let read = { (dir: DirectoryHandle) throws(DirectoryHandle.Refusal) in
                try dir.readSmall(fileName, limit: limit)
            }
            if let bytes = try withDirectory(directory, read) {
                restored = BudgetBook.decode(String(decoding: bytes, as: UTF8.self))
            }
        } catch {
            logger.warn(
                "cannot read the uplink budgets' counts; they start at zero", ("path", path), ("err", error.description)
            )
        }
        let warned = Mutex(false)
        return BudgetBook(restored: restored) { accounts in
            do throws(DirectoryHandle.Refusal) {
                try withDirectory(directory) { dir throws(DirectoryHandle.Refusal) in
                    try dir.replace(fileName, with: Array(BudgetBook.encode(accounts).utf8))
                }
                warned.withLock { $0 = false }
            } catch {
                if !warned.withLock({ was in
                    defer { was = true }
                    return was
                }) {
                    logger.warn("cannot save the uplink budgets' counts", ("path", path), ("err", error.description))
                }
            }
        }
    }

    /// Runs `body` on the history directory, opened for the call (it may be replaced while we run).
    private static func withDirectory<T>(
        _ directory: String, _ body: (DirectoryHandle) throws(DirectoryHandle.Refusal) -> T
    ) throws(DirectoryHandle.Refusal) -> T {
        let dir: DirectoryHandle
        do { dir = try DirectoryHandle.open(directory, create: false) } catch { throw .failed(error) }
        defer { dir.close() }
        return try body(dir)
    }
}
