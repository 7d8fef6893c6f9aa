/**
 * strace output (`strace -f -ttt -T -y`) -> completed syscalls. Handles the
 * pid prefix (present once more than one process is traced) and calls
 * split across `<unfinished ...>` / `<... name resumed>` lines when another
 * traced process printed in between.
 */

export interface StraceCall {
  pid: number;
  /** Wall-clock start, seconds since the epoch (from -ttt, microsecond precision). */
  startSec: number;
  name: string;
  /** The argument text between the parentheses, as strace printed it. */
  args: string;
  /** Return value text: "0", "-1", "12345", "?" */
  ret: string;
  /** errno name when the call failed, e.g. "EBUSY". */
  errno?: string;
  /** Time spent in the syscall, seconds (-T). */
  durationSec: number;
}

export type StraceLine =
  | { type: 'call'; call: StraceCall }
  | { type: 'exit'; pid: number }
  | { type: 'attached'; pid: number }
  | { type: 'message'; text: string }
  | { type: 'ignored' };

// "[pid N] " on a terminal/stderr, "N  " when written with -o; absent for a single tracee.
const PREFIX = /^(?:\[pid\s+(\d+)\]\s+|(\d+)\s+)?(\d+\.\d+)\s+(.*)$/;
const RESUMED = /^<\.\.\. ([a-z0-9_]+) resumed>(.*)$/;
const UNFINISHED = /^([a-z0-9_]+)\((.*) <unfinished \.\.\.>$/;
const COMPLETE = /^([a-z0-9_]+)\((.*)$/;
// ") = 0 <0.000123>", ") = -1 EBUSY (Device or resource busy) <0.000073>", ") = ?"
const RESULT =
  /^(.*)\)\s+=\s+(-?\d+|\?|0x[0-9a-f]+)(?:\s+([A-Z][A-Z0-9_]+)\s+\([^)]*\))?(?:\s+<(\d+\.\d+)>)?\s*$/;

export class StraceParser {
  private readonly unfinished = new Map<string, { startSec: number; args: string }>();

  /** @param defaultPid the pid to assume for lines without a [pid N] prefix (the single traced process). */
  constructor(private defaultPid: number) {}

  setDefaultPid(pid: number): void {
    this.defaultPid = pid;
  }

  line(text: string): StraceLine {
    // strace's own messages start with its name as invoked: "strace: " or "/usr/bin/strace: ".
    const own = /^(?:\S*\/)?strace: (.*)$/.exec(text);
    if (own) {
      const attached = /^Process (\d+) attached/.exec(own[1]!);
      if (attached) return { type: 'attached', pid: Number(attached[1]) };
      return { type: 'message', text: own[1]! };
    }
    const m = PREFIX.exec(text);
    if (!m) return { type: 'ignored' };
    const pid = m[1] ? Number(m[1]) : m[2] ? Number(m[2]) : this.defaultPid;
    const startSec = Number(m[3]);
    const rest = m[4]!;
    if (rest.startsWith('+++ exited') || rest.startsWith('+++ killed'))
      return { type: 'exit', pid };
    if (rest.startsWith('---')) return { type: 'ignored' };

    const resumed = RESUMED.exec(rest);
    if (resumed) {
      const key = `${pid}:${resumed[1]}`;
      const begun = this.unfinished.get(key);
      if (!begun) return { type: 'ignored' };
      this.unfinished.delete(key);
      return this.finish(pid, begun.startSec, resumed[1]!, begun.args + resumed[2]!);
    }
    const unfinished = UNFINISHED.exec(rest);
    if (unfinished) {
      this.unfinished.set(`${pid}:${unfinished[1]}`, { startSec, args: unfinished[2]! });
      if (this.unfinished.size > 10_000) this.unfinished.clear(); // a lost resume must not leak forever
      return { type: 'ignored' };
    }
    const complete = COMPLETE.exec(rest);
    if (complete) return this.finish(pid, startSec, complete[1]!, complete[2]!);
    return { type: 'ignored' };
  }

  private finish(pid: number, startSec: number, name: string, tail: string): StraceLine {
    const r = RESULT.exec(tail);
    if (!r) return { type: 'ignored' };
    return {
      type: 'call',
      call: {
        pid,
        startSec,
        name,
        args: r[1]!,
        ret: r[2]!,
        errno: r[3],
        durationSec: r[4] ? Number(r[4]) : 0,
      },
    };
  }
}

/** The first C string literal in strace's argument text ("..." with C escapes). */
export function firstQuoted(args: string): string | undefined {
  const m = /"((?:[^"\\]|\\.)*)"/.exec(args);
  if (!m) return undefined;
  return m[1]!.replace(/\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)/g, (_, esc: string) => {
    if (esc[0] === 'x') return String.fromCharCode(parseInt(esc.slice(1), 16));
    if (/^[0-7]/.test(esc)) return String.fromCharCode(parseInt(esc, 8));
    return ({ n: '\n', t: '\t', r: '\r', v: '\v', f: '\f' } as Record<string, string>)[esc] ?? esc;
  });
}

/** The path strace -y printed for the first fd argument: `3</dir/file>` -> "/dir/file". */
export function fdPath(args: string): string | undefined {
  const m = /^\d+<(.*)>/.exec(args.trim());
  return m ? m[1]!.replace(/ \(deleted\)$/, '') : undefined;
}

/** Symbolic clone flags, from clone(... flags=A|B ...) or clone3({flags=A|B, ...}). */
export function cloneFlags(args: string): Set<string> {
  const m = /flags=([A-Z0-9_|]+)/.exec(args);
  return new Set(m ? m[1]!.split('|') : []);
}
