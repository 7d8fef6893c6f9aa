/*
 * A parent with many open fds that spawns a helper every few milliseconds and
 * waits for it, like a service re-spawning helper processes. It starts with
 * posix_spawn; on "switch" (a line on stdin) it moves to fork + a pre-exec
 * loop that marks every fd close-on-exec one fcntl at a time (incident 1).
 *
 * usage: spawner HELPER FDS INTERVAL_US
 * stdout: "ready", then "switched <epoch ms>" at the change, and once a second
 * "stat <mode> <spawns> <median us>": its own time from spawn to the child's
 * exec (a close-on-exec pipe reaches EOF at exec), the ground truth.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: spawner HELPER FDS INTERVAL_US\n");
    return 2;
  }
  const char *helper = argv[1];
  int fds = atoi(argv[2]);
  int interval = atoi(argv[3]);
  struct rlimit rl = {fds + 64, fds + 64};
  if (setrlimit(RLIMIT_NOFILE, &rl) != 0) perror("setrlimit");
  int maxfd = 0;
  for (int i = 0; i < fds; i++) {
    int fd = open("/dev/null", O_RDONLY);
    if (fd < 0) {
      perror("open");
      return 1;
    }
    maxfd = fd;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  printf("ready\n");
  int forking = 0;
  char *args[] = {(char *)helper, NULL};
  static double lat[100000];
  int n = 0;
  double last_stat = now_us();
  char line[64];
  for (;;) {
    struct pollfd p = {0, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) {
      if (!fgets(line, sizeof line, stdin)) return 0; /* the test went away */
      if (strncmp(line, "switch", 6) == 0 && !forking) {
        forking = 1;
        struct timeval tv;
        gettimeofday(&tv, NULL);
        printf("switched %lld\n", (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000);
      }
    }
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
      perror("pipe2");
      return 1;
    }
    double t0 = now_us();
    pid_t pid;
    if (!forking) {
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      int err = posix_spawn(&pid, helper, &fa, NULL, args, environ);
      posix_spawn_file_actions_destroy(&fa);
      if (err) {
        fprintf(stderr, "posix_spawn: %s\n", strerror(err));
        return 1;
      }
    } else {
      pid = fork();
      if (pid < 0) {
        perror("fork");
        return 1;
      }
      if (pid == 0) {
        for (int fd = 3; fd <= maxfd; fd++) fcntl(fd, F_SETFD, FD_CLOEXEC);
        execve(helper, args, environ);
        _exit(127);
      }
    }
    close(pipefd[1]);
    char c;
    while (read(pipefd[0], &c, 1) < 0 && errno == EINTR) {
    }
    double dt = now_us() - t0;
    close(pipefd[0]);
    int status;
    waitpid(pid, &status, 0);
    if (n < 100000) lat[n++] = dt;
    double t = now_us();
    if (t - last_stat >= 1e6) {
      qsort(lat, n, sizeof lat[0], cmp);
      printf("stat %s %d %.0f\n", forking ? "fork" : "posix_spawn", n, n ? lat[n / 2] : 0.0);
      n = 0;
      last_stat = t;
    }
    usleep(interval);
  }
}
