#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "CShim.h"

int cshim_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}

int cshim_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

_Static_assert(sizeof(struct cshim_mmsghdr) == sizeof(struct mmsghdr), "mmsghdr layout");
_Static_assert(offsetof(struct cshim_mmsghdr, msg_len) == offsetof(struct mmsghdr, msg_len), "mmsghdr layout");

int cshim_sendmmsg(int fd, struct cshim_mmsghdr *messages, unsigned int count, int flags) {
    return sendmmsg(fd, (struct mmsghdr *)messages, count, flags);
}

int cshim_recvmmsg(int fd, struct cshim_mmsghdr *messages, unsigned int count, int flags) {
    return recvmmsg(fd, (struct mmsghdr *)messages, count, flags, NULL);
}

void cshim_set_thread_name(const char *name) {
    char buf[16];
    strncpy(buf, name, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    pthread_setname_np(pthread_self(), buf);
}

int cshim_setns_net(int fd) { return setns(fd, CLONE_NEWNET); }

int cshim_drop_thread_capability(int cap) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    if (cap < 0 || cap >= 64) return -1;
    if (syscall(SYS_capget, &header, data) != 0) return -1;
    data[cap / 32].effective &= ~(1u << (cap % 32));
    return (int)syscall(SYS_capset, &header, data);
}

// What a release build stamps in (scripts/release passes -Xcc -DRX_BUILD_REVISION="…" and so on);
// a plain checkout build says "unknown". Compiled here, in C, so the values come from the
// command line without rewriting any source file.
#ifndef RX_BUILD_REVISION
#define RX_BUILD_REVISION "unknown"
#endif
#ifndef RX_BUILD_BRANCH
#define RX_BUILD_BRANCH "unknown"
#endif
#ifndef RX_BUILD_DATE
#define RX_BUILD_DATE "unknown"
#endif
const char *cshim_build_revision(void) { return RX_BUILD_REVISION; }
const char *cshim_build_branch(void) { return RX_BUILD_BRANCH; }
const char *cshim_build_date(void) { return RX_BUILD_DATE; }
