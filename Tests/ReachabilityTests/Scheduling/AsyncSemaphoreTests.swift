import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// The probe places: a batch takes its places all at once, first come first served, and never
/// holds some while it waits for the rest.
@Suite(.timeLimit(.minutes(1))) struct AsyncSemaphoreTests {
    private final class Log: Sendable {
        let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }
    private final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    @Test func aBatchWaitsForAllItsPlacesWithoutHoldingAny() async {
        let places = AsyncSemaphore(4)
        await places.acquire()  // someone holds one place
        let order = Log()
        let batch = Task {
            await places.acquire(4)
            order.add("batch")
        }
        // A single request after the batch waits behind it, though three places are free.
        let single = Task {
            try? await Task.sleep(for: .milliseconds(50))
            await places.acquire()
            order.add("single")
        }
        try? await Task.sleep(for: .milliseconds(150))
        #expect(order.all.isEmpty, "the batch holds none of the three free places")
        places.release()
        await batch.value
        #expect(order.all == ["batch"])
        for _ in 0..<4 { places.release() }
        await single.value
        #expect(order.all == ["batch", "single"])
        places.release()
    }

    @Test func twoBatchesThatEachNeedMostPlacesBothFinish() async {
        let places = AsyncSemaphore(4)
        let done = Count()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    await places.acquire(3)
                    try? await Task.sleep(for: .milliseconds(1))
                    for _ in 0..<3 { places.release() }
                    done.value.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(done.value.load(ordering: .relaxed) == 50)
    }

    @Test func aRequestForMoreThanTheCapacityTakesThemAll() async {
        let places = AsyncSemaphore(2)
        await places.acquire(10)
        let waiting = Task { await places.acquire() }
        try? await Task.sleep(for: .milliseconds(50))
        places.release()
        await waiting.value  // one of the two came back
        places.release()
        places.release()
    }
}
