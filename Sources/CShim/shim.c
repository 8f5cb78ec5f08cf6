#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>
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
