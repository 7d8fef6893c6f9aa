/*
 * A service that mounts a scratch tmpfs, writes MB megabytes into it and
 * unmounts it, every INTERVAL_MS (incident 5). On "switch" (a line on stdin)
 * it writes BIG_MB instead.
 *
 * usage: unmounter DIR MB BIG_MB INTERVAL_MS
 * stdout: "ready", "switched <epoch ms>" at the change, and once a second
 * "stat <mb> <unmounts> <median ms>": umount2's wall time as the service sees
 * it (the kernel's deferred work runs before the call returns to user space).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: unmounter DIR MB BIG_MB INTERVAL_MS\n");
    return 2;
  }
  const char *mnt = argv[1];
  int mb = atoi(argv[2]);
  int big = atoi(argv[3]);
  int interval = atoi(argv[4]);
  char opts[64], path[4096], line[64];
  snprintf(opts, sizeof opts, "size=%dm", big + 16);
  snprintf(path, sizeof path, "%s/data", mnt);
  static char chunk[1 << 20];
  memset(chunk, 7, sizeof chunk);
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  double times[1000];
  int n = 0;
  double last_stat = now_ms();
  for (;;) {
    struct pollfd p = {0, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) {
      if (!fgets(line, sizeof line, stdin)) return 0; /* the test went away */
      if (strncmp(line, "switch", 6) == 0 && mb != big) {
        mb = big;
        struct timeval tv;
        gettimeofday(&tv, NULL);
        printf("switched %lld\n", (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
      }
    }
    if (mount("live-scratch", mnt, "tmpfs", 0, opts) != 0) {
      perror("mount");
      return 1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    for (int i = 0; fd >= 0 && i < mb; i++)
      if (write(fd, chunk, sizeof chunk) != sizeof chunk) {
        perror("write");
        return 1;
      }
    close(fd);
    double t0 = now_ms();
    if (umount2(mnt, 0) != 0) {
      perror("umount2");
      umount2(mnt, MNT_DETACH);
      return 1;
    }
    if (n < 1000) times[n++] = now_ms() - t0;
    double t = now_ms();
    if (t - last_stat >= 1000) {
      qsort(times, n, sizeof times[0], cmp);
      printf("stat %d %d %.2f\n", mb, n, n ? times[n / 2] : 0.0);
      n = 0;
      last_stat = t;
    }
    usleep(interval * 1000);
  }
}
