import { StrictMode, lazy } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Route, Routes } from 'react-router-dom';
import { QueryClient, QueryClientProvider, notifyManager } from '@tanstack/react-query';
import { ThemeProvider } from './app/theme.tsx';
import { Shell } from './app/Shell.tsx';
import './styles.css';

// Route-level code splitting: each page (and uPlot with it) loads on first visit.
const OverviewPage = lazy(() => import('./features/overview/OverviewPage.tsx'));
const RegressionPage = lazy(() => import('./features/regressions/RegressionPage.tsx'));
const ExplorerPage = lazy(() => import('./features/explorer/ExplorerPage.tsx'));
const SlosPage = lazy(() => import('./features/slos/SlosPage.tsx'));
const SloDetailPage = lazy(() => import('./features/slos/SloDetailPage.tsx'));
const DeploysPage = lazy(() => import('./features/deploys/DeploysPage.tsx'));
const SettingsPage = lazy(() => import('./features/settings/SettingsPage.tsx'));
const AlertPage = lazy(() => import('./features/alerts/AlertPage.tsx'));
const AlertsPage = lazy(() => import('./features/alerts/AlertsPage.tsx'));
const TracePage = lazy(() => import('./features/traces/TracePage.tsx'));
const NotFoundPage = lazy(() => import('./app/NotFoundPage.tsx'));

// Hand fresh data to React in a microtask, not a setTimeout(0) that a busy main thread can
// push back by several milliseconds: the chart starts drawing as soon as the answer is parsed.
notifyManager.setScheduler(queueMicrotask);

const queryClient = new QueryClient({
  defaultOptions: {
    queries: { staleTime: 15_000, refetchOnWindowFocus: true, refetchIntervalInBackground: false },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ThemeProvider>
        <BrowserRouter>
          <Shell>
            <Routes>
              <Route path="/" element={<OverviewPage />} />
              <Route path="/regressions/:id" element={<RegressionPage />} />
              <Route path="/explorer" element={<ExplorerPage />} />
              <Route path="/slos" element={<SlosPage />} />
              <Route path="/slos/:id" element={<SloDetailPage />} />
              <Route path="/deploys" element={<DeploysPage />} />
              <Route path="/settings" element={<SettingsPage />} />
              <Route path="/alerts" element={<AlertsPage />} />
              <Route path="/alerts/:id" element={<AlertPage />} />
              <Route path="/traces/:traceId" element={<TracePage />} />
              <Route path="*" element={<NotFoundPage />} />
            </Routes>
          </Shell>
        </BrowserRouter>
      </ThemeProvider>
    </QueryClientProvider>
  </StrictMode>,
);
