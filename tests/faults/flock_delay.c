/* LD_PRELOAD shim for tests/faults/lock_race.sh: the first flock() on a file whose name ends in
 * ".lock" (cflrun's lock on <out>.lock) is held back, widening the window between opening the lock
 * file and locking it: as it begins it creates the file CFLRUN_FLOCK_WAITING, then waits until the
 * file CFLRUN_FLOCK_GO exists (60 s at most). Every other flock() passes at once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* Whether descriptor fd names a file ending in ".lock". */
static int is_lock_file(int fd) {
  char link[64];
  char name[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t length = readlink(link, name, sizeof name - 1);
  if (length < 5) {
    return 0;
  }
  name[length] = '\0';
  return strcmp(name + length - 5, ".lock") == 0;
}

static void hold_back(const char *waiting, const char *go) {
  FILE *marker = fopen(waiting, "w");
  if (marker != NULL) {
    fclose(marker);
  }
  const struct timespec tick = {0, 10 * 1000000L};
  for (int i = 0; i < 6000 && access(go, F_OK) != 0; ++i) {
    nanosleep(&tick, NULL);
  }
}

int flock(int fd, int operation) {
  static int (*real_flock)(int, int);
  static int held;
  if (real_flock == NULL) {
    real_flock = (int (*)(int, int))dlsym(RTLD_NEXT, "flock");
  }
  const char *waiting = getenv("CFLRUN_FLOCK_WAITING");
  const char *go = getenv("CFLRUN_FLOCK_GO");
  if (!held && waiting != NULL && go != NULL && is_lock_file(fd)) {
    held = 1;
    hold_back(waiting, go);
  }
  return real_flock(fd, operation);
}
