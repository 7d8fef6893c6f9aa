/*
 * A WAL keeper (incident 3): every INTERVAL_MS it writes FILES small segment
 * files into DIR and then removes them, syncing the directory once at the end
 * of the pass. On "switch" (a line on stdin) it syncs the directory after
 * every unlink instead, as PostgreSQL did at failover.
 *
 * usage: walkeeper DIR FILES INTERVAL_MS
 * stdout: "ready", "switched <epoch ms>" at the change, and once a second
 * "stat <mode> <passes> <median pass ms> <fsyncs>": the time of its removal
 * passes (unlinks and fsyncs) as it would log them, the ground truth.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
  if (argc != 4) {
    fprintf(stderr, "usage: walkeeper DIR FILES INTERVAL_MS\n");
    return 2;
  }
  const char *dir = argv[1];
  int files = atoi(argv[2]);
  int interval = atoi(argv[3]);
  int dfd = open(dir, O_RDONLY | O_DIRECTORY);
  if (dfd < 0) {
    perror("open dir");
    return 1;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  static char block[8192];
  memset(block, 7, sizeof block);
  int each = 0;
  double passes[1000];
  int n = 0, fsyncs = 0;
  double last_stat = now_ms();
  char name[64], line[64];
  for (unsigned seg = 0;; seg += files) {
    struct pollfd p = {0, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) {
      if (!fgets(line, sizeof line, stdin)) return 0; /* the test went away */
      if (strncmp(line, "switch", 6) == 0 && !each) {
        each = 1;
        struct timeval tv;
        gettimeofday(&tv, NULL);
        printf("switched %lld\n", (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
      }
    }
    for (int i = 0; i < files; i++) {
      snprintf(name, sizeof name, "%08X", seg + i);
      int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd < 0 || write(fd, block, sizeof block) != sizeof block) {
        perror("write segment");
        return 1;
      }
      close(fd);
    }
    double t0 = now_ms();
    for (int i = 0; i < files; i++) {
      snprintf(name, sizeof name, "%08X", seg + i);
      if (unlinkat(dfd, name, 0) != 0) {
        perror("unlink");
        return 1;
      }
      if (each) {
        fsync(dfd);
        fsyncs++;
      }
    }
    if (!each) {
      fsync(dfd);
      fsyncs++;
    }
    if (n < 1000) passes[n++] = now_ms() - t0;
    double t = now_ms();
    if (t - last_stat >= 1000) {
      qsort(passes, n, sizeof passes[0], cmp);
      printf("stat %s %d %.1f %d\n", each ? "each" : "batch", n, n ? passes[n / 2] : 0.0, fsyncs);
      n = fsyncs = 0;
      last_stat = t;
    }
    usleep(interval * 1000);
  }
}
