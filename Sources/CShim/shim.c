#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
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

static int read_thread_capabilities(struct __user_cap_data_struct data[2]) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    return (int)syscall(SYS_capget, &header, data);
}

static unsigned long long join(unsigned int low, unsigned int high) {
    return (unsigned long long)high << 32 | low;
}

int cshim_read_privilege(struct cshim_privilege *out) {
    struct __user_cap_data_struct data[2];
    memset(out, 0, sizeof *out);
    out->secure_exec = getauxval(AT_SECURE);
    out->real_uid = getuid();
    out->effective_uid = geteuid();
    out->real_gid = getgid();
    out->effective_gid = getegid();
    out->threads = -1;
    DIR *tasks = opendir("/proc/self/task");
    if (tasks) {
        out->threads = 0;
        struct dirent *entry;
        while ((entry = readdir(tasks))) out->threads += entry->d_name[0] != '.';
        closedir(tasks);
    }
    if (read_thread_capabilities(data) != 0) return -1;
    out->effective = join(data[0].effective, data[1].effective);
    out->permitted = join(data[0].permitted, data[1].permitted);
    out->inheritable = join(data[0].inheritable, data[1].inheritable);
    return 0;
}

int cshim_set_thread_capabilities(unsigned long long effective, unsigned long long permitted,
                                  unsigned long long inheritable) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2] = {
        { (unsigned int)effective, (unsigned int)permitted, (unsigned int)inheritable },
        { (unsigned int)(effective >> 32), (unsigned int)(permitted >> 32), (unsigned int)(inheritable >> 32) },
    };
    return (int)syscall(SYS_capset, &header, data);
}

// Raise, one syscall, lower: nothing else runs on this thread with the capability effective, and
// other threads never had it (capabilities are per thread).
int cshim_socket_raising_capability(int domain, int type, int protocol, int cap) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    if (cap < 0 || cap >= 64) abort();
    unsigned int bit = 1u << (cap % 32);
    int raised = read_thread_capabilities(data) == 0 && (data[cap / 32].permitted & bit) &&
                 !(data[cap / 32].effective & bit);
    if (raised) {
        data[cap / 32].effective |= bit;
        raised = syscall(SYS_capset, &header, data) == 0;
    }
    int fd = socket(domain, type, protocol);
    int saved = errno;
    if (raised) {
        data[cap / 32].effective &= ~bit;
        if (syscall(SYS_capset, &header, data) != 0) abort(); // never run on with it raised
    }
    errno = saved;
    return fd;
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
