/** Time range (presets, custom, zoom out), auto-refresh interval and the last-updated time. All in the URL. */
import { useEffect, useRef, useState } from 'react';
import { useIsFetching, useQueryClient } from '@tanstack/react-query';
import { useRange, useUrlState } from '../state/url.ts';
import {
  PRESETS,
  REFRESH_OPTIONS,
  describeRange,
  fromLocalInput,
  isRelative,
  refreshInterval,
  resolveRange,
  toLocalInput,
  zoomOut,
  zoomRange,
} from '../state/timeRange.ts';
import { formatClock, setTimeZoneMode, useTimeZoneMode } from '../lib/time.ts';

export function TimeRangePicker() {
  const [range, setRange] = useRange();
  const [open, setOpen] = useState(false);
  const now = Date.now();
  const resolved = resolveRange(range, now);
  const [customFrom, setCustomFrom] = useState('');
  const [customTo, setCustomTo] = useState('');
  const [customError, setCustomError] = useState('');
  const panelRef = useRef<HTMLDivElement>(null);
  const zone = useTimeZoneMode();

  useEffect(() => {
    if (!open) return;
    setCustomFrom(toLocalInput(resolved.fromMs));
    setCustomTo(toLocalInput(resolved.toMs));
    setCustomError('');
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && setOpen(false);
    const onClick = (e: MouseEvent) => {
      if (panelRef.current && !panelRef.current.contains(e.target as Node)) setOpen(false);
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('mousedown', onClick);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('mousedown', onClick);
    };
  }, [open]);

  const applyCustom = () => {
    const a = fromLocalInput(customFrom);
    const b = fromLocalInput(customTo);
    if (!Number.isFinite(a) || !Number.isFinite(b)) return setCustomError('Enter both times.');
    if (a >= b) return setCustomError('"From" must be before "to".');
    setRange(zoomRange(a, b));
    setOpen(false);
  };

  return (
    <div className="range-picker" ref={panelRef}>
      <button
        type="button"
        className="btn"
        onClick={() => setRange(zoomOut(resolved, now))}
        title="Zoom out (twice as wide)"
        aria-label="Zoom out"
      >
        −
      </button>
      <button
        type="button"
        className="btn range-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => setOpen((o) => !o)}
        data-testid="range-button"
      >
        <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
          <circle cx="8" cy="8" r="6.5" stroke="currentColor" strokeWidth="1.5" fill="none" />
          <path d="M8 4.5V8l2.5 1.5" stroke="currentColor" strokeWidth="1.5" fill="none" />
        </svg>{' '}
        {describeRange(range, now)}
        {!resolved.valid ? <span className="warn"> (invalid range in link)</span> : null}
      </button>
      {open ? (
        <div className="range-panel" role="dialog" aria-label="Choose a time range">
          <div className="range-presets">
            {PRESETS.map((p) => (
              <button
                key={p.from}
                type="button"
                className={`btn ${range.from === p.from && range.to === 'now' ? 'active' : ''}`}
                onClick={() => {
                  setRange({ from: p.from, to: 'now' });
                  setOpen(false);
                }}
              >
                {p.label}
              </button>
            ))}
          </div>
          <form
            className="range-custom"
            onSubmit={(e) => {
              e.preventDefault();
              applyCustom();
            }}
          >
            <label className="field">
              <span>From ({zone === 'utc' ? 'UTC' : 'local time'})</span>
              <input
                type="datetime-local"
                value={customFrom}
                onChange={(e) => setCustomFrom(e.target.value)}
              />
            </label>
            <label className="field">
              <span>To ({zone === 'utc' ? 'UTC' : 'local time'})</span>
              <input
                type="datetime-local"
                value={customTo}
                onChange={(e) => setCustomTo(e.target.value)}
              />
            </label>
            {customError ? <div className="warn">{customError}</div> : null}
            <button type="submit" className="btn primary">
              Apply custom range
            </button>
          </form>
        </div>
      ) : null}
    </div>
  );
}

export function RefreshControl() {
  const { get, set, params } = useUrlState();
  const qc = useQueryClient();
  const fetching = useIsFetching();
  const [lastUpdated, setLastUpdated] = useState<number | null>(null);
  const range = { from: params.get('from') || 'now-6h', to: params.get('to') || 'now' };
  const interval = refreshInterval(params.get('refresh'), range);

  useEffect(
    () =>
      qc.getQueryCache().subscribe((ev) => {
        if (ev.type === 'updated' && ev.action.type === 'success') setLastUpdated(Date.now());
      }),
    [qc],
  );

  const value =
    REFRESH_OPTIONS.find((o) => o.value === get('refresh'))?.value ??
    (interval === false ? 'off' : '1m');
  return (
    <div className="refresh">
      <label className="sr-only" htmlFor="refresh-select">
        Auto-refresh
      </label>
      <select
        id="refresh-select"
        value={value}
        onChange={(e) => set({ refresh: e.target.value })}
        title={
          isRelative(range)
            ? 'Auto-refresh interval'
            : 'Auto-refresh (a fixed range does not move; choose an interval to refresh anyway)'
        }
      >
        {REFRESH_OPTIONS.map((o) => (
          <option key={o.value} value={o.value}>
            {o.value === 'off' ? 'Auto-refresh off' : `Every ${o.label}`}
          </option>
        ))}
      </select>
      <button
        type="button"
        className="btn"
        onClick={() => void qc.invalidateQueries()}
        aria-label="Refresh now"
        title="Refresh now"
      >
        ↻
      </button>
      <span className="last-updated" aria-live="off" data-testid="last-updated">
        {fetching ? <span className="spinner small" aria-hidden="true" /> : null}
        {lastUpdated ? `Updated ${formatClock(lastUpdated)}` : fetching ? 'Loading…' : ''}
      </span>
    </div>
  );
}

/** Local time or UTC for every time the UI prints (and the chart axes). */
export function TimeZoneToggle() {
  const zone = useTimeZoneMode();
  return (
    <button
      type="button"
      className="btn tz-toggle"
      aria-pressed={zone === 'utc'}
      onClick={() => setTimeZoneMode(zone === 'utc' ? 'local' : 'utc')}
      title={zone === 'utc' ? 'Times in UTC; show local time' : 'Times in local time; show UTC'}
      data-testid="tz-toggle"
    >
      UTC
    </button>
  );
}
