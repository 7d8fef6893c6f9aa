"""Scope workload: fsync a file in each given directory, and spawn /bin/true.

Usage: fsync_dirs.py COMM SPAWNS DIR [DIR ...]
Sets its process name to COMM, creates each DIR, writes and fsyncs one file
in it and fsyncs the directory, then spawns /bin/true SPAWNS times. Prints
"done".
"""
import ctypes
import os
import subprocess
import sys

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME = 15

comm, spawns, dirs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
libc.prctl(PR_SET_NAME, comm.encode(), 0, 0, 0)
for d in dirs:
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f"), "wb") as f:
        f.write(b"x" * 4096)
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(d, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
for _ in range(spawns):
    subprocess.run(["/bin/true"], check=True)
print("done", flush=True)
