/* An LD_PRELOAD shim that puts one process's wall clock off, for tests/e2e/test_database_time.py
   (the time audit's shim). It shifts CLOCK_REALTIME (and gettimeofday and time) by
   SKEW_SECONDS, or by the integer in the file SKEW_FILE, read again at most every 200 ms so a
   test can step the clock while the process runs. Monotonic clocks are left as they are, as an
   NTP step leaves them. The test builds it with the C compiler on PATH (cc, or the clang the
   Swift toolchain brings):
     cc -shared -fPIC -O2 -o libclockskew.so clock_skew.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *) = 0;
static long cached = 0;
static long long last_check = -1;

static void resolve(void) {
  if (!real_clock_gettime) real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
}

static long skew(void) {
  const char *file = getenv("SKEW_FILE");
  if (!file) {
    const char *seconds = getenv("SKEW_SECONDS");
    return seconds ? atol(seconds) : 0;
  }
  struct timespec m;
  real_clock_gettime(CLOCK_MONOTONIC, &m);
  long long now = m.tv_sec * 1000LL + m.tv_nsec / 1000000;
  if (last_check < 0 || now - last_check > 200) {
    FILE *fp = fopen(file, "r");
    long value = 0;
    if (fp) {
      if (fscanf(fp, "%ld", &value) != 1) value = 0;
      fclose(fp);
    }
    cached = value;
    last_check = now;
  }
  return cached;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  resolve();
  int r = real_clock_gettime(id, ts);
  if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += skew();
  return r;
}

int gettimeofday(struct timeval *tv, void *tz) {
  static int (*real)(struct timeval *, void *) = 0;
  if (!real) real = dlsym(RTLD_NEXT, "gettimeofday");
  resolve();
  int r = real(tv, tz);
  if (r == 0) tv->tv_sec += skew();
  return r;
}

time_t time(time_t *t) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (t) *t = ts.tv_sec;
  return ts.tv_sec;
}
