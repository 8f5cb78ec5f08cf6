import ReachabilityTestSupport
import Testing

@testable import ReachabilityExporter
@testable import ReachabilityVerdict

/// Stream semantics shared by `PathMonitor` and `FakePathSource`.
@Suite struct PathBroadcasterTests {
    static let offline = FakePathSource.snapshot(families: [])
    static let online = FakePathSource.snapshot()

    @Test func everySubscriberStartsWithCurrentThenSeesChanges() async {
        let source = FakePathSource(Self.offline)
        let a = source.updates()
        let b = source.updates()
        #expect(source.subscriberCount == 2)
        source.send(Self.online)
        for stream in [a, b] {
            var iterator = stream.makeAsyncIterator()
            let first = await iterator.next()
            // bufferingNewest(1): the unread initial element was replaced by the change.
            #expect(first?.status(for: .ipv4) == .satisfied(interface: "eth0"))
            #expect(first?.changeCount == 1)
        }
        #expect(source.current.changeCount == 1)
    }

    @Test func slowConsumerSeesOnlyTheLatest() async {
        let source = FakePathSource(Self.offline)
        let stream = source.updates()
        for i in 0..<50 { source.send(i % 2 == 0 ? Self.online : Self.offline) }
        var iterator = stream.makeAsyncIterator()
        let latest = await iterator.next()
        #expect(latest?.changeCount == 50)
        #expect(latest?.overallSatisfied == false)
    }

    @Test func streamsInOrderAndFinish() async {
        let source = FakePathSource(Self.offline)
        let stream = source.updates()
        let consumer = Task {
            var counts: [Int] = []
            for await snapshot in stream { counts.append(snapshot.changeCount) }
            return counts
        }
        // Wait until the consumer took the initial element, then feed it one at a time.
        let probe = source.updates()
        var probeIterator = probe.makeAsyncIterator()
        _ = await probeIterator.next()
        source.send(Self.online)
        _ = await probeIterator.next()
        source.finish()
        let counts = await consumer.value
        #expect(counts.last == 1)
        #expect(counts == counts.sorted())
        #expect(source.subscriberCount == 0)
        // After finish, a new subscriber gets the last snapshot and an ended stream.
        var late = source.updates().makeAsyncIterator()
        #expect(await late.next()?.changeCount == 1)
        #expect(await late.next() == nil)
    }

    @Test func cancelledSubscriberIsDropped() async {
        let source = FakePathSource(Self.offline)
        let stream = source.updates()
        #expect(source.subscriberCount == 1)
        let task = Task {
            for await _ in stream {}
        }
        task.cancel()
        await task.value
        #expect(source.subscriberCount == 0)
    }
}
