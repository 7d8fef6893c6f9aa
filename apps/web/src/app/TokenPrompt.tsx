/** Asks for a bearer token when the server answers 401, keeps it in localStorage, and reloads the data. */
import { useEffect, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { UNAUTHORIZED_EVENT, getToken, setToken } from '../api/client.ts';

export function TokenPrompt() {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [value, setValue] = useState('');
  const dialogRef = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const onUnauthorized = (e: Event) => {
      setReason(String((e as CustomEvent).detail ?? ''));
      setOpen(true);
    };
    window.addEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
  }, []);

  useEffect(() => {
    const d = dialogRef.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);

  const save = () => {
    setToken(value.trim() || null);
    setOpen(false);
    setValue('');
    void qc.invalidateQueries();
  };

  return (
    <dialog
      ref={dialogRef}
      className="dialog"
      aria-labelledby="token-title"
      onClose={() => setOpen(false)}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          save();
        }}
      >
        <h2 id="token-title">This Onset server needs a token</h2>
        <p className="muted">
          {getToken() ? 'The saved token was refused' : 'No token is saved in this browser'}
          {reason ? ` (${reason})` : ''}. Paste a token with the <code>read</code> scope (
          <code>admin</code> to manage SLOs and webhooks). It is kept in this browser's localStorage
          only.
        </p>
        <label className="field">
          <span>Bearer token</span>
          <input
            type="password"
            autoComplete="off"
            value={value}
            onChange={(e) => setValue(e.target.value)}
            required
          />
        </label>
        <div className="row gap">
          <button type="submit" className="btn primary">
            Save and reload data
          </button>
          <button type="button" className="btn" onClick={() => setOpen(false)}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
