/** When the incidents happen: every incident's step begins at the same onset. */

export const MIN = 60_000;

export interface IncidentTimes {
  /** First minute of data. */
  fromMs: number;
  /** Where every incident's step begins (on a minute). */
  onsetMs: number;
  /** End of phase 1 (exclusive). */
  endMs: number;
  /** End of phase 2 (exclusive); equal to endMs when there is no phase 2. */
  phase2EndMs: number;
}

export interface IncidentWindow {
  /** Minutes of data before the onset. */
  beforeMin: number;
  /** Minutes of data after the onset. */
  afterMin: number;
  /** Minutes between the end of phase 1 and now. */
  endsAgoMin: number;
  /** Minutes of phase 2 after the end of phase 1. */
  phase2Min: number;
}

/** The server replay: four hours before, 45 minutes after, and a 40-minute phase 2 up to now. */
export const REPLAY_WINDOW: IncidentWindow = {
  beforeMin: 240,
  afterMin: 45,
  endsAgoMin: 45,
  phase2Min: 40,
};

/** The browser view: three hours ending at the current minute, the change one hour ago. */
export const LIVE_WINDOW: IncidentWindow = {
  beforeMin: 120,
  afterMin: 60,
  endsAgoMin: 0,
  phase2Min: 0,
};

export function incidentTimes(
  nowMs = Date.now(),
  w: IncidentWindow = REPLAY_WINDOW,
): IncidentTimes {
  const endMs = Math.floor(nowMs / MIN) * MIN - w.endsAgoMin * MIN;
  const onsetMs = endMs - w.afterMin * MIN;
  return {
    fromMs: onsetMs - w.beforeMin * MIN,
    onsetMs,
    endMs,
    phase2EndMs: endMs + w.phase2Min * MIN,
  };
}
