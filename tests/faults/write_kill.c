/* LD_PRELOAD shim for tests/faults/kill_sweep.sh: counts the writes a run makes to its own files
 * and kills the process (SIGKILL, as a node crash or the OOM killer would) just before the n-th.
 *
 * A counted event is a write(), pwrite(), pwrite64(), writev() or pwritev() to a descriptor whose
 * file name contains CFLRUN_KILL_MATCH (e.g. the --out file's name: the partial file, the
 * checkpoint and its .tmp), an fsync()/fdatasync() of such a file, or a rename(), unlink() or remove() of
 * such a name. Variables:
 *   CFLRUN_KILL_MATCH  substring of the file names that count (required; nothing counts without it)
 *   CFLRUN_KILL_AT     n >= 1: SIGKILL this process just before its n-th counted event
 *   CFLRUN_KILL_COUNT  file to which a process that counted any event writes its count at exit
 *   CFLRUN_KILL_TRACE  file to which each counted event is appended as "n call file" */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static long counted;

/* Whether the file name contains CFLRUN_KILL_MATCH. */
static int matches(const char *name) {
  const char *match = getenv("CFLRUN_KILL_MATCH");
  return match != NULL && *match != '\0' && name != NULL && strstr(name, match) != NULL;
}

/* Counts one event; at CFLRUN_KILL_AT, kills the process before it happens. */
static void count_event(const char *call, const char *name) {
  ++counted;
  const char *trace = getenv("CFLRUN_KILL_TRACE");
  FILE *out = trace != NULL ? fopen(trace, "a") : NULL;
  if (out != NULL) {
    fprintf(out, "%ld %s %s\n", counted, call, name);
    fclose(out);
  }
  const char *at = getenv("CFLRUN_KILL_AT");
  if (at != NULL && atol(at) == counted) {
    raise(SIGKILL);
  }
}

/* Counts an event on descriptor fd if its file name matches. */
static void count_fd(const char *call, int fd) {
  char link[64];
  char name[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, name, sizeof name - 1);
  if (length > 0) {
    name[length] = '\0';
    if (matches(name)) {
      count_event(call, name);
    }
  }
}

__attribute__((destructor)) static void report_count(void) {
  const char *file = getenv("CFLRUN_KILL_COUNT");
  if (file != NULL && counted > 0) {
    FILE *out = fopen(file, "w");
    if (out != NULL) {
      fprintf(out, "%ld\n", counted);
      fclose(out);
    }
  }
}

/* The libc function the shim wraps, looked up once. */
#define REAL(name)                        \
  static __typeof__(&name) real_##name;   \
  if (real_##name == NULL) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void *buffer, size_t size) {
  REAL(write);
  count_fd("write", fd);
  return real_write(fd, buffer, size);
}

ssize_t pwrite(int fd, const void *buffer, size_t size, off_t offset) {
  REAL(pwrite);
  count_fd("pwrite", fd);
  return real_pwrite(fd, buffer, size, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t size, off_t offset) {
  REAL(pwrite64);
  count_fd("pwrite64", fd);
  return real_pwrite64(fd, buffer, size, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
  REAL(writev);
  count_fd("writev", fd);
  return real_writev(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
  REAL(pwritev);
  count_fd("pwritev", fd);
  return real_pwritev(fd, vector, count, offset);
}

int fsync(int fd) {
  REAL(fsync);
  count_fd("fsync", fd);
  return real_fsync(fd);
}

int fdatasync(int fd) {
  REAL(fdatasync);
  count_fd("fdatasync", fd);
  return real_fdatasync(fd);
}

int rename(const char *from, const char *to) {
  REAL(rename);
  if (matches(from) || matches(to)) {
    count_event("rename", to);
  }
  return real_rename(from, to);
}

int unlink(const char *name) {
  REAL(unlink);
  if (matches(name)) {
    count_event("unlink", name);
  }
  return real_unlink(name);
}

int remove(const char *name) {
  REAL(remove);
  if (matches(name)) {
    count_event("remove", name);
  }
  return real_remove(name);
}
