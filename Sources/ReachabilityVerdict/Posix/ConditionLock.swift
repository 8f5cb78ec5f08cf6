import Glibc

/// A pthread mutex with one condition variable, for OS threads that must block until another
/// thread finishes something (the render coalescer's waiting scrapers). Not for async code.
// @unchecked: the pthread objects are the only state, and they synchronise themselves.
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
    /// Unlocks, waits for a `broadcast`, locks again. Call with the lock held.
    package func wait() { pthread_cond_wait(condition, mutex) }
    /// Wakes every waiter.
    package func broadcast() { pthread_cond_broadcast(condition) }
}
