import Glibc

/// Whether `count` bytes at `a` and `b` are equal (libc `memcmp`, vectorised).
@inline(__always) func bytesEqual(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    memcmp(a, b, count) == 0
}
