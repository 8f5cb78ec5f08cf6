import Synchronization
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// A gate a job waits at, suspended, until the test opens it; it tells when a job reached it.
final class JobGate: Sendable {
    private let state = Mutex<(open: Bool, arrived: Int, waiting: [CheckedContinuation<Void, Never>])>((false, 0, []))

    var arrived: Int { state.withLock { $0.arrived } }

    func pass() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let go = state.withLock { s in
                s.arrived += 1
                if s.open { return true }
                s.waiting.append(c)
                return false
            }
            if go { c.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { s in
            s.open = true
            defer { s.waiting = [] }
            return s.waiting
        }
        for c in waiting { c.resume() }
    }
}

/// Yields until `condition` holds (a bounded number of times); whether it did.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<200_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}

@Suite struct CoalescingQueueTests {
    /// Found by a hostile review (#41): reloads asked for during a long one each ran after it.
    @Test func requestsDuringARunShareOneMoreRun() async throws {
        let queue = CoalescingQueue<Int>(maxWaiters: 64)
        let gate = JobGate()
        let runner = Task {
            await queue.run { _ in
                await gate.pass()
                return queue.runs
            }
        }
        defer { runner.cancel() }
        let first = Task { await queue.requestAndWait("http", timeout: .seconds(30)) }
        #expect(await eventually { gate.arrived == 1 })
        let later = (0..<40).map { _ in Task { await queue.requestAndWait("http", timeout: .seconds(30)) } }
        #expect(queue.request("SIGHUP"))
        #expect(await eventually { queue.waiting == 41 })
        gate.open()
        guard case .done(let one) = await first.value else {
            Issue.record("the first request got no outcome")
            return
        }
        #expect(one == 1)
        for task in later {
            guard case .done(let outcome) = await task.value else {
                Issue.record("a coalesced request got no outcome")
                continue
            }
            #expect(outcome == 2, "every later request shares the second run")
        }
        #expect(queue.runs == 2)
    }

    @Test func waitersAreBoundedTimedOutAndStoppedAtShutdown() async throws {
        let queue = CoalescingQueue<Int>(maxWaiters: 2)
        let gate = JobGate()
        let runner = Task {
            await queue.run { _ in
                await gate.pass()
                return 7
            }
        }
        let a = Task { await queue.requestAndWait("a", timeout: .seconds(30)) }
        let b = Task { await queue.requestAndWait("b", timeout: .milliseconds(300)) }
        #expect(await eventually { queue.waiting == 2 })
        guard case .busy = await queue.requestAndWait("c", timeout: .seconds(30)) else {
            Issue.record("a third waiter was queued past the bound")
            return
        }
        guard case .timedOut = await b.value else {
            Issue.record("no timeout")
            return
        }
        runner.cancel()
        guard case .stopped = await a.value else {
            Issue.record("a waiter outlived the shutdown")
            return
        }
        gate.open()
        await runner.value
        #expect(!queue.request("after"))
        guard case .stopped = await queue.requestAndWait("after", timeout: .seconds(30)) else {
            Issue.record("a request after shutdown was queued")
            return
        }
    }
}
