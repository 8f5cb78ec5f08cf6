#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
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
