"""PELT and BinSeg (ruptures) on the TCPD series, as TCPDBench's defaults run them.

TCPDBench's defaults are R changepoint's cpt.mean: a change in mean with
a Normal cost on the z-normalised series (unit variance), the MBIC penalty
(3 log n for one parameter per segment) and BinSeg's default of at most
Q = 5 changes. Here that is ruptures' "l2" cost (the sum of squared
residuals, twice the negative log-likelihood at unit variance), penalty
3 log n, min_size 2, jump 1; BinSeg keeps its first 5 splits (binary
segmentation is greedy, so they are the ones n_bkps=5 gives). The "normal"
cost (mean and variance) scored 0.574 / 0.457 here against the published
default's 0.692 / 0.659; "l2" 0.683 / 0.666. Missing values are carried
forward.

"pelt_min_ratio" is PELT held to the smallest step Onset's server reports
(argv[3], its minRatio): the change whose segments either side have the
closest medians (of the raw values, in log terms) is merged away until
every remaining one moved by at least that ratio (all values positive).

Reads one JSON object per line ({name, values}) from argv[1] and writes
{name, pelt, binseg, pelt_min_ratio} lines to argv[2].
"""
import json
import math
import sys
import warnings

import numpy as np
import ruptures as rpt

warnings.filterwarnings("ignore")


def prepare(values):
    x = prepare_raw(values)
    sd = x.std()
    return ((x - x.mean()) / (sd if sd > 0 else 1.0)).reshape(-1, 1)


MAX_BINSEG = 5


def breakpoints(algo, signal, **predict):
    try:
        bkps = algo.fit(signal).predict(**predict)
    except Exception:  # too short for any split
        return []
    return [int(b) for b in bkps[:-1]]  # the last one is n


def merge_below(values, cps, min_ratio):
    """Drop the smallest step (in log median terms) until each is at least min_ratio."""
    y = np.log(np.maximum(prepare_raw(values), 1e-300))
    cps = list(cps)
    while cps:
        b = [0] + cps + [len(y)]
        steps = [
            abs(np.median(y[b[i + 1] : b[i + 2]]) - np.median(y[b[i] : b[i + 1]]))
            for i in range(len(cps))
        ]
        i = int(np.argmin(steps))
        if steps[i] >= math.log(min_ratio):
            break
        cps.pop(i)
    return cps


def prepare_raw(values):
    out, last = [], None
    for v in values:
        if v is None:
            v = last if last is not None else next(x for x in values if x is not None)
        out.append(float(v))
        last = v
    return np.asarray(out, dtype=float)


def main():
    min_ratio = float(sys.argv[3]) if len(sys.argv) > 3 else 1.2
    with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
        for line in f:
            s = json.loads(line)
            x = prepare(s["values"])
            pen = 3 * math.log(len(x))
            pelt = breakpoints(rpt.Pelt(model="l2", min_size=2, jump=1), x, pen=pen)
            binseg = breakpoints(rpt.Binseg(model="l2", min_size=2, jump=1), x, pen=pen)
            if len(binseg) > MAX_BINSEG:
                binseg = breakpoints(rpt.Binseg(model="l2", min_size=2, jump=1), x, n_bkps=MAX_BINSEG)
            held = merge_below(s["values"], pelt, min_ratio)
            out.write(
                json.dumps({"name": s["name"], "pelt": pelt, "binseg": binseg, "pelt_min_ratio": held})
                + "\n"
            )


if __name__ == "__main__":
    main()
