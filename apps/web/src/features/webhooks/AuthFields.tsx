/**
 * A webhook's credentials in the Settings forms (docs/webhooks.md "Credentials"):
 * HTTP basic auth, a bearer token or one custom header. The secret part is typed
 * into a password field and never shown again: the server answers only the kind
 * and the user or header name (`auth`), which AuthShown prints masked, like the secret.
 */
import { useState } from 'react';
import type { WebhookAuthShown, WebhookInput } from '@onset/contract';

type AuthKind = 'none' | 'basic' | 'bearer' | 'header';
/** On edit: leave the stored credentials as they are. */
type EditKind = AuthKind | 'keep';

export interface AuthDraft {
  kind: EditKind;
  username: string;
  password: string;
  token: string;
  name: string;
  value: string;
}

export const emptyAuth = (kind: EditKind): AuthDraft => ({
  kind,
  username: '',
  password: '',
  token: '',
  name: '',
  value: '',
});

/** The request's `auth` for a draft: undefined leaves it as it is (create: none; edit: unchanged). */
export function authOf(d: AuthDraft, editing: boolean): WebhookInput['auth'] {
  switch (d.kind) {
    case 'basic':
      return { type: 'basic', username: d.username.trim(), password: d.password };
    case 'bearer':
      return { type: 'bearer', token: d.token.trim() };
    case 'header':
      return { type: 'header', name: d.name.trim(), value: d.value };
    case 'none':
      return editing ? { type: 'none' } : undefined;
    default:
      return undefined;
  }
}

/** The stored credentials, masked: "basic auth alice:••••", "bearer ••••", "header X-Key: ••••". */
export function authText(a: WebhookAuthShown): string {
  if (a.type === 'basic') return `basic auth ${a.username ?? ''}:••••`;
  if (a.type === 'bearer') return 'bearer ••••';
  if (a.type === 'header') return `header ${a.name ?? ''}: ••••`;
  return a.type;
}

export function AuthShown({ auth }: { auth: WebhookAuthShown | null | undefined }) {
  if (!auth) return null;
  return (
    <div className="muted small" data-testid="webhook-auth" data-auth-type={auth.type}>
      {authText(auth)}
    </div>
  );
}

export function useAuthDraft(kind: EditKind) {
  return useState<AuthDraft>(() => emptyAuth(kind));
}

export function AuthFields({
  draft,
  onChange,
  current,
}: {
  draft: AuthDraft;
  onChange: (d: AuthDraft) => void;
  /** Editing: what is stored now (offers "keep"). */
  current?: WebhookAuthShown | null;
}) {
  const editing = current !== undefined;
  const set = (k: keyof AuthDraft) => (e: { target: { value: string } }) =>
    onChange({ ...draft, [k]: e.target.value });
  return (
    <>
      <label className="field">
        <span>Credentials</span>
        <select
          name="auth_type"
          value={draft.kind}
          onChange={(e) => onChange({ ...emptyAuth(e.target.value as EditKind) })}
        >
          {editing ? (
            <option value="keep">{current ? `keep ${authText(current)}` : 'keep (none)'}</option>
          ) : null}
          <option value="none">{editing && current ? 'remove them' : 'none'}</option>
          <option value="basic">HTTP basic auth</option>
          <option value="bearer">bearer token</option>
          <option value="header">custom header</option>
        </select>
      </label>
      {draft.kind === 'basic' ? (
        <>
          <label className="field">
            <span>User name</span>
            <input
              name="auth_username"
              required
              value={draft.username}
              onChange={set('username')}
              autoComplete="off"
            />
          </label>
          <label className="field">
            <span>Password</span>
            <input
              name="auth_password"
              type="password"
              value={draft.password}
              onChange={set('password')}
              autoComplete="new-password"
            />
          </label>
        </>
      ) : null}
      {draft.kind === 'bearer' ? (
        <label className="field">
          <span>Token</span>
          <input
            name="auth_token"
            type="password"
            required
            value={draft.token}
            onChange={set('token')}
            autoComplete="new-password"
          />
        </label>
      ) : null}
      {draft.kind === 'header' ? (
        <>
          <label className="field">
            <span>Header name</span>
            <input
              name="auth_header_name"
              required
              value={draft.name}
              onChange={set('name')}
              placeholder="X-Api-Key"
              autoComplete="off"
            />
          </label>
          <label className="field">
            <span>Header value</span>
            <input
              name="auth_header_value"
              type="password"
              required
              value={draft.value}
              onChange={set('value')}
              autoComplete="new-password"
            />
          </label>
        </>
      ) : null}
    </>
  );
}
