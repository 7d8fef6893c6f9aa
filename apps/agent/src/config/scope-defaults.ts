/**
 * What host-wide tracing leaves out by default (`scope.defaults: false` turns
 * this off; `scope.include` brings single paths back). Each entry is a glob
 * (picomatch, `**` crosses directories, dotfiles match) on the paths a traced
 * event names: the fsync'd directory and file, the unmounted mount point, the
 * spawned executable. These places churn with temporary names, every run a
 * new series of a few points that never comes back, and their cost is not a
 * service's latency.
 */
export const DEFAULT_EXCLUDES: { why: string; globs: string[] }[] = [
  {
    why: "browsers' temporary and test profiles",
    globs: [
      '/tmp/playwright*{,/**}',
      '/tmp/.org.chromium.Chromium.*{,/**}',
      '/tmp/puppeteer_dev_*{,/**}',
      '/tmp/rust_mozprofile*{,/**}',
      '/dev/shm/.org.chromium.Chromium.*',
      '**/.config/chromium/**',
      '**/.config/google-chrome*/**',
      '**/.cache/chromium/**',
      '**/.cache/google-chrome*/**',
      '**/.mozilla/firefox/**',
      '**/.cache/mozilla/**',
      '**/.cache/ms-playwright/**',
    ],
  },
  {
    why: "package managers' caches",
    globs: [
      '**/.npm/_cacache/**',
      '**/.npm/_logs/**',
      '**/.npm/_npx/**',
      '**/.cache/pip/**',
      '**/.cache/pypoetry/**',
      '**/.cache/yarn/**',
      '**/.yarn/berry/cache/**',
      '**/.pnpm-store/**',
      '**/.local/share/pnpm/**',
      '**/.cargo/registry/**',
      '**/go/pkg/mod/**',
      '**/.cache/go-build/**',
      '/var/cache/apt/**',
      '/var/lib/apt/lists/**',
      '/var/cache/dnf/**',
      '/var/cache/yum/**',
    ],
  },
];
