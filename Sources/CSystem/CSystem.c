#define _GNU_SOURCE
#include "CSystem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

const uint32_t csys_EPOLLIN = EPOLLIN;
const uint32_t csys_EPOLLOUT = EPOLLOUT;
const uint32_t csys_EPOLLERR = EPOLLERR;
const uint32_t csys_EPOLLHUP = EPOLLHUP;
const uint32_t csys_EPOLLRDHUP = EPOLLRDHUP;

const int csys_EPOLL_CTL_ADD = EPOLL_CTL_ADD;
const int csys_EPOLL_CTL_MOD = EPOLL_CTL_MOD;
const int csys_EPOLL_CTL_DEL = EPOLL_CTL_DEL;

int csys_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int csys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = events;
  ev.data.u64 = data;
  return epoll_ctl(epfd, op, fd, &ev);
}

int csys_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms) {
  struct epoll_event evs[256];
  if (max > 256) max = 256;
  int n = epoll_wait(epfd, evs, max, timeout_ms);
  for (int i = 0; i < n; i++) {
    events[i] = evs[i].events;
    data[i] = evs[i].data.u64;
  }
  return n;
}

int csys_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int csys_eventfd_signal(int fd) {
  uint64_t one = 1;
  return write(fd, &one, sizeof one) == sizeof one ? 0 : -1;
}

int csys_eventfd_drain(int fd) {
  uint64_t value;
  return read(fd, &value, sizeof value) == sizeof value ? 0 : -1;
}

static void format_peer(const struct sockaddr_storage *ss, char *peer, size_t peer_len) {
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss->ss_family == AF_INET) {
    const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
    inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof ip);
    port = ntohs(sin->sin_port);
    snprintf(peer, peer_len, "%s:%d", ip, port);
  } else if (ss->ss_family == AF_INET6) {
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
    inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof ip);
    port = ntohs(sin6->sin6_port);
    snprintf(peer, peer_len, "[%s]:%d", ip, port);
  } else {
    snprintf(peer, peer_len, "unknown");
  }
}

int csys_accept(int fd, char *peer, size_t peer_len) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  int client = accept4(fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (client >= 0 && peer != NULL && peer_len > 0) format_peer(&ss, peer, peer_len);
  return client;
}

int csys_listen_tcp(const char *host, int port, int backlog, int reuse_port, int *bound_port) {
  struct sockaddr_storage ss;
  socklen_t len;
  memset(&ss, 0, sizeof ss);
  struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    len = sizeof *sin;
  } else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons((uint16_t)port);
    len = sizeof *sin6;
  } else {
    errno = EINVAL;
    return -1;
  }
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0) goto fail;
  if (reuse_port && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0) goto fail;
  if (bind(fd, (struct sockaddr *)&ss, len) < 0) goto fail;
  if (listen(fd, backlog) < 0) goto fail;
  if (bound_port != NULL) {
    struct sockaddr_storage actual;
    socklen_t alen = sizeof actual;
    if (getsockname(fd, (struct sockaddr *)&actual, &alen) < 0) goto fail;
    *bound_port = actual.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&actual)->sin_port)
                                               : ntohs(((struct sockaddr_in6 *)&actual)->sin6_port);
  }
  return fd;
fail : {
  int saved = errno;
  close(fd);
  errno = saved;
  return -1;
}
}

int csys_set_nodelay(int fd) {
  int one = 1;
  return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

long csys_send(int fd, const void *buf, size_t len) { return send(fd, buf, len, MSG_NOSIGNAL); }

long csys_writev2(int fd, const void *a, size_t alen, const void *b, size_t blen) {
  struct iovec iov[2] = {{(void *)a, alen}, {(void *)b, blen}};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = iov;
  msg.msg_iovlen = blen > 0 ? 2 : 1;
  // sendmsg rather than writev so MSG_NOSIGNAL applies.
  return sendmsg(fd, &msg, MSG_NOSIGNAL);
}

uint64_t csys_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int csys_errno(void) { return errno; }

void csys_set_thread_name(const char *name) {
  char truncated[16];
  snprintf(truncated, sizeof truncated, "%s", name);
  pthread_setname_np(pthread_self(), truncated);
}

void csys_thread_name(char *buffer, size_t size) {
  if (size == 0) return;
  if (pthread_getname_np(pthread_self(), buffer, size) != 0) buffer[0] = 0;
}
