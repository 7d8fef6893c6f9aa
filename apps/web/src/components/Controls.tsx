import { useEffect, useRef, type ReactNode, type RefObject } from 'react';
import type { Scale } from '../state/url.ts';

/** A row of buttons of which one is pressed: picks one of a few values. */
function SegmentedToggle<T extends string>({
  label,
  options,
  value,
  onChange,
}: {
  label: string;
  options: ReadonlyArray<readonly [value: T, text: string]>;
  value: T;
  onChange: (v: T) => void;
}) {
  return (
    <div className="segmented" role="group" aria-label={label}>
      {options.map(([v, text]) => (
        <button
          key={v}
          type="button"
          className={`btn ${value === v ? 'active' : ''}`}
          aria-pressed={value === v}
          onClick={() => onChange(v)}
        >
          {text}
        </button>
      ))}
    </div>
  );
}

const SCALES = [
  ['log', 'Log'],
  ['linear', 'Linear'],
] as const;

/** Log (default) / linear switch for latency axes. */
export function ScaleToggle({ scale, onChange }: { scale: Scale; onChange: (s: Scale) => void }) {
  return (
    <SegmentedToggle
      label="Latency axis scale"
      options={SCALES}
      value={scale}
      onChange={onChange}
    />
  );
}

export type MedianOrTail = '0.5' | '0.99';
const MEDIAN_OR_TAIL = [
  ['0.5', 'p50'],
  ['0.99', 'p99'],
] as const;

/** p50 / p99 buttons: which quantile a chart of several lines (cohorts, edge views) shows. */
export function QuantileToggle({
  value,
  onChange,
  label,
}: {
  value: MedianOrTail;
  onChange: (q: MedianOrTail) => void;
  label: string;
}) {
  return (
    <SegmentedToggle label={label} options={MEDIAN_OR_TAIL} value={value} onChange={onChange} />
  );
}

export function Select({
  label,
  value,
  options,
  onChange,
  allLabel,
  id,
}: {
  label: string;
  value: string;
  options: ReadonlyArray<string | { value: string; label: string }>;
  onChange: (v: string) => void;
  allLabel?: string;
  id?: string;
}) {
  const fieldId = id ?? `sel-${label.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <label className="field" htmlFor={fieldId}>
      <span>{label}</span>
      <select id={fieldId} value={value} onChange={(e) => onChange(e.target.value)}>
        {allLabel !== undefined ? <option value="">{allLabel}</option> : null}
        {options.map((o) => {
          const v = typeof o === 'string' ? o : o.value;
          const l = typeof o === 'string' ? o || '(none)' : o.label;
          return (
            <option key={v} value={v}>
              {l}
            </option>
          );
        })}
      </select>
    </label>
  );
}

/**
 * A box that scrolls sideways (a panel on a phone, a wide table) must be reachable from the
 * keyboard to be scrolled: it joins the tab order while its content is wider than it is
 * (axe's scrollable-region-focusable), and leaves it when it fits again.
 */
export function useKeyboardScrollable<T extends HTMLElement>(): RefObject<T | null> {
  const ref = useRef<T>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const check = () => {
      if (el.scrollWidth > el.clientWidth + 1) el.tabIndex = 0;
      else el.removeAttribute('tabindex');
    };
    check();
    const ro = new ResizeObserver(check);
    ro.observe(el);
    // Content that grows (data arriving) changes scrollWidth without resizing the box.
    const mo = new MutationObserver(check);
    mo.observe(el, { childList: true, subtree: true });
    return () => {
      ro.disconnect();
      mo.disconnect();
    };
  }, []);
  return ref;
}

export function Panel({
  title,
  actions,
  children,
  id,
}: {
  title: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  id?: string;
}) {
  const ref = useKeyboardScrollable<HTMLElement>();
  return (
    <section className="panel" aria-labelledby={id} ref={ref}>
      <div className="panel-head">
        <h2 id={id}>{title}</h2>
        {actions ? <div className="panel-actions">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}

export function KindBadge({ kind }: { kind: string }) {
  return <span className={`kind-badge kind-${kind}`}>{kind}</span>;
}
