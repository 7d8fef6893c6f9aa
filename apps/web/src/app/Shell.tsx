import { Suspense, useEffect, useRef, type ReactNode } from 'react';
import { NavLink, useLocation, useSearchParams } from 'react-router-dom';
import { useTheme } from './theme.tsx';
import { RefreshControl, TimeRangePicker, TimeZoneToggle } from './TimeRangePicker.tsx';
import { useTimeZoneMode } from '../lib/time.ts';
import { TokenPrompt } from './TokenPrompt.tsx';
import { linkWithGlobals } from '../state/url.ts';
import { Loading } from '../components/States.tsx';

const NAV = [
  { to: '/', label: 'Overview', end: true },
  { to: '/alerts', label: 'Alerts' },
  { to: '/explorer', label: 'Explorer' },
  { to: '/slos', label: 'SLOs' },
  { to: '/deploys', label: 'Deploys' },
  { to: '/settings', label: 'Settings' },
];

export function Shell({ children }: { children: ReactNode }) {
  const { theme, toggle } = useTheme();
  const [params] = useSearchParams();
  const { pathname } = useLocation();
  const timeless = pathname.startsWith('/settings');
  // Every time on the page follows the zone toggle: re-mount the page when it flips.
  const zone = useTimeZoneMode();
  // A link that took us here is gone with the old page, and focus would fall to <body> (a keyboard
  // user starts again from the top): each new page takes focus on its main region instead.
  const mainRef = useRef<HTMLElement>(null);
  const shownPath = useRef(pathname);
  useEffect(() => {
    if (shownPath.current === pathname) return;
    shownPath.current = pathname;
    mainRef.current?.focus();
  }, [pathname]);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <NavLink to={linkWithGlobals('/', params)} className="brand" aria-label="Onset overview">
          <svg viewBox="0 0 16 16" width="18" height="18" aria-hidden="true">
            <path d="M1 12h5l2-8 2 8h5" stroke="currentColor" strokeWidth="2" fill="none" />
          </svg>
          Onset
        </NavLink>
        <nav aria-label="Main">
          {NAV.map((n) => (
            <NavLink
              key={n.to}
              to={linkWithGlobals(n.to, params)}
              end={n.end}
              className={({ isActive }) => `nav-link${isActive ? ' active' : ''}`}
            >
              {n.label}
            </NavLink>
          ))}
        </nav>
        <div className="topbar-right">
          {timeless ? null : (
            <>
              <TimeRangePicker />
              <RefreshControl />
            </>
          )}
          <TimeZoneToggle />
          <button
            type="button"
            className="btn icon"
            onClick={toggle}
            aria-label={theme === 'dark' ? 'Switch to light theme' : 'Switch to dark theme'}
            title={theme === 'dark' ? 'Light theme' : 'Dark theme'}
          >
            {theme === 'dark' ? '☀' : '☾'}
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1} key={zone} ref={mainRef}>
        <Suspense fallback={<Loading label="Loading page…" height={400} />}>{children}</Suspense>
      </main>
      <TokenPrompt />
    </div>
  );
}
