import Reachability

/// Shared fakes and loopback servers for tests and benchmarks live in this target.
public enum TestSupport {}
