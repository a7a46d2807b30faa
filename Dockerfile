# syntax=docker/dockerfile:1
# Relay's container image. Multi-stage: all dependencies to build the dashboard, production
# dependencies only for the runtime, which runs as the unprivileged `node` user.
#
#   docker build -t relay-gateway:0.1.0 .
#   docker run -p 8080:8080 -p 8081:8081 -e RELAY_MASTER_KEY=... -e RELAY_ADMIN_TOKEN=... relay-gateway:0.1.0
#
# The config file is /etc/relay/relay.yaml (RELAY_CONFIG; mount your own over it, e.g. one of
# examples/config/), the data directory /var/lib/relay (RELAY_DATA_DIR: embedded PGlite, file
# logs and payloads when those are used). The build stage compiles the service to dist/ with
# esbuild, which `relay start` runs (no TypeScript loader at run time: less memory, faster start).
# Node 22: Node 20 is past its end of life, and the AWS SDK's 2027 releases need 22. Not 24 yet:
# on 24 the embedded setup's RSS passes the 360 MB bound (test/e2e/embedded-rss.test.ts).
ARG NODE_IMAGE=node:22-bookworm-slim

# --- every dependency (dev included) and the dashboard build ---------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds the dashboard, whose sources are not copied yet. The
# test-only tools (the agent CLIs, chdb) are in test/tools/package.json, never copied here.
# npm install keeps every version the lock file pins.
RUN npm install --ignore-scripts --no-audit --no-fund
COPY admin-ui ./admin-ui
RUN npm run build:ui
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY core ./core
COPY plugins ./plugins
RUN node bin/build-server.mjs

# --- production dependencies only ------------------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# --- runtime -----------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# Both ports on the container's interfaces: what reaches them is what `-p` publishes (8081 only to
# a private network; see the README's "What to expose").
ENV NODE_ENV=production \
    RELAY_CONFIG=/etc/relay/relay.yaml \
    RELAY_DATA_DIR=/var/lib/relay \
    RELAY_HOST=0.0.0.0 \
    RELAY_CONTROL_HOST=0.0.0.0
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY core ./core
COPY plugins ./plugins
COPY config ./config
COPY --from=build /app/admin-ui/dist ./admin-ui/dist
COPY --from=build /app/dist ./dist
# In-house plugins mounted anywhere (e.g. /etc/relay/plugins/vendor-acme) import
# 'relay-gateway': Node looks for it in every node_modules up to /, so /node_modules/relay-gateway
# makes this image's copy of the plugin API the one they get.
RUN mkdir -p /etc/relay /var/lib/relay /node_modules \
 && ln -s /app /node_modules/relay-gateway \
 && cp config/relay.yaml /etc/relay/relay.yaml \
 && chown -R node:node /etc/relay /var/lib/relay
USER node
VOLUME ["/etc/relay", "/var/lib/relay"]
EXPOSE 8080 8081
# Slim images have no curl: node's fetch checks /livez (200 while the process serves; a database
# outage does not make the container unhealthy).
HEALTHCHECK --interval=15s --timeout=5s --start-period=40s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.RELAY_PORT || 8080) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains in-flight requests and flushes queued usage events before exit (server.drainTimeoutMs).
STOPSIGNAL SIGTERM
# The entrypoint gives V8 a heap ceiling of 2048 MB (RELAY_MAX_HEAP_MB), or half the container's
# memory limit when that is less (see bin/container-entrypoint.sh for why), then execs the command.
ENTRYPOINT ["/bin/sh", "bin/container-entrypoint.sh", "node", "bin/relay.js", "start"]
