"""Spawn through a pre-exec hook that marks every fd close-on-exec one fcntl
at a time (incident 1: the slow path taken when close_range is unavailable).

Usage: fd_spawner.py COMM OPEN_FDS EXECUTABLE COUNT
Opens fds until OPEN_FDS are open (0: none extra), then COUNT times: fork; in the child loop
fcntl(fd, F_SETFD, FD_CLOEXEC) over every fd up to the highest open one; exec
EXECUTABLE. Prints "done" at the end.
"""
import ctypes
import fcntl
import os
import resource
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, sys.argv[1].encode(), 0, 0, 0)
target, exe, count = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])

already = len(os.listdir("/proc/self/fd")) - 1  # minus the fd listdir used
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if target > hard:
    sys.exit(f"RLIMIT_NOFILE hard limit {hard} is below {target}")
if soft < target:
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(max(0, target - already))]
highest = max(fds + [2])

for _ in range(count):
    pid = os.fork()
    if pid == 0:
        for fd in range(3, highest + 1):
            try:
                fcntl.fcntl(fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
            except OSError:
                pass
        os.execv(exe, [exe])
    os.waitpid(pid, 0)

print("done", flush=True)
