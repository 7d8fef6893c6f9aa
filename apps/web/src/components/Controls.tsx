import type { ReactNode } from 'react';
import type { Scale } from '../state/url.ts';

/** Log (default) / linear switch for latency axes. */
export function ScaleToggle({ scale, onChange }: { scale: Scale; onChange: (s: Scale) => void }) {
  return (
    <div className="segmented" role="group" aria-label="Latency axis scale">
      {(['log', 'linear'] as const).map((s) => (
        <button
          key={s}
          type="button"
          className={`btn ${scale === s ? 'active' : ''}`}
          aria-pressed={scale === s}
          onClick={() => onChange(s)}
        >
          {s === 'log' ? 'Log' : 'Linear'}
        </button>
      ))}
    </div>
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
  return (
    <section className="panel" aria-labelledby={id}>
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
