#ifndef CSHIM_H
#define CSHIM_H
// Kernel and libc definitions that Swift's Glibc module does not import.
// Do not define _GNU_SOURCE here (it breaks the Glibc module map); GNU-only
// functions are wrapped in shim.c instead.
#include <sys/socket.h>
#include <malloc.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/if_link.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>

/// mallopt(M_ARENA_MAX, n): malloc.h is not in Swift's Glibc module.
static inline int cshim_limit_malloc_arenas(int n) { return mallopt(M_ARENA_MAX, n); }

static inline struct cmsghdr *cshim_CMSG_FIRSTHDR(struct msghdr *m) { return CMSG_FIRSTHDR(m); }
static inline struct cmsghdr *cshim_CMSG_NXTHDR(struct msghdr *m, struct cmsghdr *c) { return CMSG_NXTHDR(m, c); }
static inline unsigned char *cshim_CMSG_DATA(struct cmsghdr *c) { return CMSG_DATA(c); }
static inline size_t cshim_CMSG_SPACE(size_t n) { return CMSG_SPACE(n); }
static inline size_t cshim_CMSG_LEN(size_t n) { return CMSG_LEN(n); }

int cshim_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
/// struct mmsghdr (GNU): one message of a sendmmsg/recvmmsg batch, and how many bytes it moved.
struct cshim_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};
/// sendmmsg(2) and recvmmsg(2) (GNU, so wrapped in shim.c); timeouts are not offered.
int cshim_sendmmsg(int fd, struct cshim_mmsghdr *messages, unsigned int count, int flags);
int cshim_recvmmsg(int fd, struct cshim_mmsghdr *messages, unsigned int count, int flags);
int cshim_pipe2(int fds[2], int flags);
/// Sets the calling thread's name (best effort; names are cut to 15 bytes).
void cshim_set_thread_name(const char *name);
/// Moves the calling thread into the network namespace open at `fd` (setns(fd, CLONE_NEWNET)).
/// Returns 0 or -1 with errno set.
int cshim_setns_net(int fd);
/// Clears capability `cap` from the calling thread's effective set (tests: act unprivileged).
int cshim_drop_thread_capability(int cap);
/// The process's credentials as exec left them, read before anything else runs
/// (`BorrowedCapabilities.holdAtStart`). Capability sets are 64-bit masks (bit n: capability n).
struct cshim_privilege {
    unsigned long secure_exec; // getauxval(AT_SECURE): exec raised privilege (file caps, setuid)
    unsigned int real_uid, effective_uid, real_gid, effective_gid;
    unsigned long long effective, permitted, inheritable; // the calling thread's
    int threads; // entries of /proc/self/task, -1 when unreadable
};
/// Fills `out`; 0, or -1 with errno set when capget fails.
int cshim_read_privilege(struct cshim_privilege *out);
/// Sets the calling thread's capability sets (capset with pid 0 affects this thread only; threads
/// it creates later copy them). 0, or -1 with errno set.
int cshim_set_thread_capabilities(unsigned long long effective, unsigned long long permitted,
                                  unsigned long long inheritable);
/// socket(2) with capability `cap` raised in the calling thread's effective set for that call
/// only, and lowered before returning (errno is socket's). Aborts if it cannot lower it again.
int cshim_socket_raising_capability(int domain, int type, int protocol, int cap);
/// The source revision, branch and build date a release build was stamped with ("unknown" if not).
const char *cshim_build_revision(void);
const char *cshim_build_branch(void);
const char *cshim_build_date(void);
#endif
