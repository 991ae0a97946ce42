#ifndef CSYSTEM_H
#define CSYSTEM_H
// Placeholder: the HTTP layer adds its epoll/eventfd shims here.
int csystem_placeholder(void);
#endif
