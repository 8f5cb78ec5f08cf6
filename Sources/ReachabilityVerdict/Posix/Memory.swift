import CShim
import Glibc

/// Whether `count` bytes at `a` and `b` are equal (libc `memcmp`, vectorised).
@inline(__always) package func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    memcmp(a, b, count) == 0
}

/// glibc malloc's arenas: one per thread that contends, up to eight per core, each keeping the
/// memory its threads freed. The exporter's threads (the HTTP workers, the cooperative pool, the
/// blocking pool) allocate little each, so a few shared arenas hold the same work in far fewer
/// resident pages. `MALLOC_ARENA_MAX` in the environment wins.
package enum MallocArenas {
    package static func limit(to count: Int32) {
        guard getenv("MALLOC_ARENA_MAX") == nil else { return }
        _ = cshim_limit_malloc_arenas(count)
    }
}
