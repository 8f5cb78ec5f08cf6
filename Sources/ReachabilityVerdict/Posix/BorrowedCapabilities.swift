import CShim
import Glibc
import Synchronization

/// The capabilities the process holds only because its executable file grants them (`setcap
/// cap_net_raw+ep`, as the Debian package does) to a user who does not hold them otherwise, and
/// the one use it makes of them: opening raw ICMP sockets. Not for a service given the
/// capability by its unit (`AmbientCapabilities=`) or for root: they own what they hold.
///
/// A file capability is every local user's, so whatever the process does with it, any user can
/// make it do with a configuration of their own. `holdAtStart()` (the executable's first line,
/// while the process has one thread) therefore lowers every borrowed capability from the
/// effective set, so no thread ever runs with one; CAP_NET_RAW stays permitted, and `socket`
/// raises it on the calling thread for the `socket(2)` of a raw ICMP socket only
/// (capabilities are per thread on Linux). Marks (`SO_MARK`) and anything else then run with
/// the user's own rights, and the configuration refuses marks at load (`ExporterOptions`).
package struct BorrowedCapabilities: Sendable, Equatable {
    /// CAP_NET_RAW (linux/capability.h: 13) as a mask bit.
    package static let netRaw: UInt64 = 1 << 13

    /// Bit n: capability n is borrowed.
    package var mask: UInt64

    package init(mask: UInt64) { self.mask = mask }

    package var isEmpty: Bool { mask == 0 }

    /// The pure decision, from what exec left: capabilities are borrowed when exec raised
    /// privilege (`AT_SECURE`: file capabilities or setuid), the real user is not root, and the
    /// capability is not in the inheritable set. That last rule keeps a unit's
    /// `AmbientCapabilities=CAP_NET_RAW` its own: systemd puts an ambient capability in the
    /// inheritable set too, and exec keeps the inheritable set although it clears the ambient
    /// one for a file with capabilities (which makes `AT_SECURE` 1 for the service as well);
    /// an ordinary user cannot add to their inheritable set (capset allows only what they hold).
    package static func decide(
        secureExec: Bool, realUID: UInt32, permitted: UInt64, inheritable: UInt64
    ) -> BorrowedCapabilities {
        guard secureExec, realUID != 0 else { return BorrowedCapabilities(mask: 0) }
        return BorrowedCapabilities(mask: permitted & ~inheritable)
    }

    private static let held = Atomic<UInt64>(0)

    /// What `holdAtStart()` found borrowed (empty before it ran, and in tests).
    package static var current: BorrowedCapabilities { BorrowedCapabilities(mask: held.load(ordering: .acquiring)) }

    /// Call first, before any thread exists. Finds the borrowed capabilities and, when there
    /// are any, lowers them from the effective set (and every borrowed one but CAP_NET_RAW
    /// from the permitted set too). Returns why the process must not go on, nil when it may.
    package static func holdAtStart() -> String? {
        var p = cshim_privilege()
        let read = cshim_read_privilege(&p)
        guard read == 0 else {
            return p.secure_exec != 0 ? "cannot read the process's capabilities: \(Errno.current)" : nil
        }
        let borrowed = decide(
            secureExec: p.secure_exec != 0, realUID: p.real_uid, permitted: p.permitted, inheritable: p.inheritable)
        if borrowed.isEmpty { return nil }
        if p.effective_uid != p.real_uid || p.effective_gid != p.real_gid {
            return "set-user-ID or set-group-ID installs are not supported (they lend the owner's identity, "
                + "not only a capability); give the binary cap_net_raw with setcap instead"
        }
        if p.threads != 1 {
            return "internal error: capabilities must be lowered before any thread starts (\(p.threads) threads)"
        }
        let keep = p.permitted & ~(borrowed.mask & ~netRaw)
        if cshim_set_thread_capabilities(p.effective & ~borrowed.mask, keep, p.inheritable) != 0 {
            return "cannot lower the capabilities granted by the executable file: \(Errno.current)"
        }
        held.store(borrowed.mask, ordering: .releasing)
        return nil
    }

    /// `socket(2)`. For a raw ICMP or ICMPv6 socket while CAP_NET_RAW is borrowed, with it
    /// raised on the calling thread for that call only; any other socket with what the thread
    /// holds. Returns the descriptor, or -1 with errno set.
    package static func socket(_ domain: Int32, _ type: Int32, _ proto: Int32) -> Int32 {
        let rawICMP =
            type & 0xf == Int32(SOCK_RAW.rawValue)
            && (proto == Int32(IPPROTO_ICMP) || proto == Int32(IPPROTO_ICMPV6))
        guard rawICMP, current.mask & netRaw != 0 else { return Glibc.socket(domain, type, proto) }
        return cshim_socket_raising_capability(domain, type, proto, 13)
    }
}
