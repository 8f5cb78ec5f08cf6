/// Runs `body` for every element of `items`, at most `width` at once (the next starts as one
/// ends), and returns the results in the order they finished. A round's batch of 10,000 probes
/// so holds `width` child tasks, not 10,000 waiting on the probe semaphore (#33: their frames
/// were 40 MB at the peak).
package func boundedConcurrently<Item: Sendable, Result: Sendable>(
    _ items: [Item], width: Int, _ body: @escaping @Sendable (Item) async -> Result
) async -> [Result] {
    await withTaskGroup(of: Result.self) { group in
        var next = 0
        func add() {
            guard next < items.count else { return }
            let item = items[next]
            next += 1
            group.addTask { await body(item) }
        }
        for _ in 0..<max(1, width) { add() }
        var out: [Result] = []
        out.reserveCapacity(items.count)
        for await result in group {
            out.append(result)
            add()
        }
        return out
    }
}
