/**
 * Giving back the memory bpftrace only needed to start.
 *
 * bpftrace 0.17 compiles its program with LLVM and clang, then only reads BPF
 * maps and prints. The compiler's code pages it touched (~65 MB of
 * libLLVM/libclang on Debian 12) stay mapped and resident for as long as it
 * runs, private to it unless another LLVM user maps the same pages. Its
 * ahead-of-time runtime (bpftrace-aotrt, no LLVM) cannot run the agent's
 * programs (no curtask, casts or positional parameters in 0.17).
 *
 * After bpftrace has attached, the agent asks the kernel to reclaim those
 * pages with process_madvise(2) + MADV_PAGEOUT (Linux ≥ 5.10, CAP_SYS_NICE):
 * they are clean, file-backed pages, so the kernel simply drops them; should
 * bpftrace ever run that code again it is read back from the library file.
 * Pages shared with another process are left alone by the kernel.
 *
 * Node has no way to make a raw system call, so a few lines of Perl (perl-base
 * is essential on Debian) do it: pidfd_open(2) and process_madvise(2) have the
 * same numbers (434, 440) on every architecture Debian ships except alpha and
 * mips, which Onset does not support.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';

const PAGEOUT = String.raw`
use strict;
my ($pid, $pattern) = @ARGV;
open(my $maps, '<', "/proc/$pid/maps") or die "cannot read /proc/$pid/maps: $!\n";
my $iov = '';
my $n = 0;
while (my $line = <$maps>) {
  my ($range, $perms, $offset, $dev, $inode, $path) = split ' ', $line, 6;
  next unless defined $path && $path =~ /$pattern/;
  my ($lo, $hi) = map { hex } split /-/, $range;
  $iov .= pack('QQ', $lo, $hi - $lo);
  $n++;
}
die "no mapping matches\n" unless $n;
my $pidfd = syscall(434, $pid + 0, 0);
die "pidfd_open: $!\n" if $pidfd < 0;
my $done = syscall(440, $pidfd, $iov, $n, 21, 0);
die "process_madvise: $!\n" if $done < 0;
print "$n $done\n";
`;

/** Resident memory of a process in bytes (from /proc/PID/smaps_rollup), or undefined when gone. */
function residentBytes(pid: number): number | undefined {
  try {
    const kb = /^Rss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

export interface PageOutResult {
  ok: boolean;
  /** How much the process's resident set shrank. */
  releasedBytes?: number;
  reason?: string;
}

/** Ask the kernel to reclaim the resident pages of `pid`'s mappings of files matching `pattern`. */
export function pageOutMappings(
  pid: number,
  pattern: string,
  perlPath = 'perl',
): Promise<PageOutResult> {
  const before = residentBytes(pid);
  return new Promise((resolve) => {
    execFile(
      perlPath,
      ['-e', PAGEOUT, String(pid), pattern],
      { timeout: 10_000, encoding: 'utf8' },
      (err, _stdout, stderr) => {
        if (err) {
          const why = (stderr || err.message).trim().split('\n')[0];
          resolve({ ok: false, reason: why });
          return;
        }
        const after = residentBytes(pid);
        resolve({
          ok: true,
          releasedBytes:
            before !== undefined && after !== undefined ? Math.max(0, before - after) : undefined,
        });
      },
    );
  });
}
