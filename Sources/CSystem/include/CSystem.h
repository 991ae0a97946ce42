#ifndef CSYSTEM_H
#define CSYSTEM_H

#include <stdint.h>
#include <stddef.h>

// Thin shims over Linux calls whose types Swift imports badly: `struct epoll_event` is packed
// on x86_64 and the EPOLL* constants are an anonymous enum, so both are exposed as plain ints.

extern const uint32_t csys_EPOLLIN;
extern const uint32_t csys_EPOLLOUT;
extern const uint32_t csys_EPOLLERR;
extern const uint32_t csys_EPOLLHUP;
extern const uint32_t csys_EPOLLRDHUP;

extern const int csys_EPOLL_CTL_ADD;
extern const int csys_EPOLL_CTL_MOD;
extern const int csys_EPOLL_CTL_DEL;

/// epoll_create1(EPOLL_CLOEXEC).
int csys_epoll_create(void);
/// epoll_ctl with the event mask and the 64-bit user data passed by value.
int csys_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// epoll_wait that unpacks the reported events into two parallel arrays of `max` entries.
int csys_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms);

/// A non-blocking, close-on-exec eventfd with counter 0.
int csys_eventfd(void);
/// Adds 1 to the eventfd counter; returns 0 or -1 (EAGAIN means a wake-up is already pending).
int csys_eventfd_signal(int fd);
/// Resets the eventfd counter; returns 0 or -1.
int csys_eventfd_drain(int fd);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; writes the peer as "ip:port" (NUL-terminated)
/// into `peer` when it is not NULL.
int csys_accept(int fd, char *peer, size_t peer_len);

/// A non-blocking TCP listener on host:port (IPv4 or IPv6 literal) with SO_REUSEADDR and,
/// when `reuse_port` is set, SO_REUSEPORT. Returns the fd or -1 with errno set;
/// `bound_port` receives the port actually bound (useful for port 0).
int csys_listen_tcp(const char *host, int port, int backlog, int reuse_port, int *bound_port);

/// Sets TCP_NODELAY; responses are written whole, so Nagle only adds latency.
int csys_set_nodelay(int fd);

/// send(2) with MSG_NOSIGNAL so a vanished peer yields EPIPE instead of SIGPIPE.
long csys_send(int fd, const void *buf, size_t len);

/// writev of two buffers (head and body) without building iovecs in Swift.
long csys_writev2(int fd, const void *a, size_t alen, const void *b, size_t blen);

/// CLOCK_MONOTONIC in nanoseconds.
uint64_t csys_monotonic_ns(void);

/// Current errno (reading errno from Swift goes through a function anyway).
int csys_errno(void);

/// Names the calling thread (15 bytes at most) as `top -H`, perf and /proc show it; Linux
/// threads otherwise inherit the name of the thread that created them.
void csys_set_thread_name(const char *name);

/// The calling thread's name.
void csys_thread_name(char *buffer, size_t size);

#endif
