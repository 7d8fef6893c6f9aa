"""Run Apache Otava on the evaluation series (called by bench/eval-detect/run.ts).

Input: JSON lines, one series per line: {"id", "y50": [...], "y99": [...], "truth": [index, ...]}
with y = log(quantile + floor), i.e. the same values the Onset detector sees.
Output: JSON lines {"id", "cps": [index, ...], "delays": [points or null per truth]}.

Otava runs with its defaults (window 50, max p-value 0.001, no minimum magnitude),
as its CLI `analyze` does: each metric separately, after which change points of
the two metrics within 5 points of each other count once (Otava groups a test's
metrics by exact time only; merging nearby ones can only help its precision).

Detection delay: Otava is a batch method, so it is re-run on the data up to
k + d points for growing d (the way it is used on a growing series); the delay
is the first d from which every later run (up to k + 150 and the full series)
reports a change within 5 points of the true index k. (Its first report is
often a flicker that later runs drop; an alert raised on that would be
retracted.) Only the 200 points before k are passed (4 windows, enough for its
local split).
"""
import json
import sys
from multiprocessing import Pool

from otava.analysis import compute_change_points

MARGIN = 5
DELAY_GRID = list(range(1, 11)) + [12, 15, 20, 25, 30, 40, 50, 60, 80, 100, 150]


def otava_cps(values):
    if len(values) < 4:
        return []
    cps, _ = compute_change_points(list(values))
    return [int(c.index) for c in cps]


def merged(y50, y99):
    idx = sorted(set(otava_cps(y50)) | set(otava_cps(y99)))
    out = []
    for i in idx:
        if out and i - out[-1] <= MARGIN:
            continue
        out.append(i)
    return out


def delay_for(y50, y99, k, final_match):
    """First d from which every later prefix run (and the full run) reports the change."""
    if not final_match:
        return None
    start = max(0, k - 200)
    found = []
    for d in DELAY_GRID:
        end = k + d
        if end > len(y50):
            break
        cps = merged(y50[start:end], y99[start:end])
        found.append((d, any(abs(start + c - k) <= MARGIN for c in cps)))
    delay = None
    for d, ok in reversed(found):
        if not ok:
            break
        delay = d
    return delay


def run(line):
    s = json.loads(line)
    y50, y99 = s["y50"], s["y99"]
    cps = merged(y50, y99)
    return json.dumps({
        "id": s["id"],
        "cps": cps,
        "delays": [delay_for(y50, y99, k, any(abs(c - k) <= MARGIN for c in cps)) for k in s["truth"]],
    })


def main():
    src, dst = sys.argv[1], sys.argv[2]
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else None
    with open(src) as f:
        lines = [l for l in f if l.strip()]
    with Pool(workers) as pool, open(dst, "w") as out:
        for i, res in enumerate(pool.imap(run, lines, chunksize=4)):
            out.write(res + "\n")
            if (i + 1) % 100 == 0:
                print(f"  otava: {i + 1}/{len(lines)} series", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
