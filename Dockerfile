# Mailroom's image: the API, the workers and the SMTP listeners, chosen with --role (docs/operations.md#container).
#   docker build -t mailroom .
#   docker run -d -p 3000:3000 -v mailroom-data:/data mailroom

# Dependencies, without devDependencies. better-sqlite3 is a compiled addon: a prebuilt binary when one
# can be downloaded, else built from source with python3, make and g++, against the headers of the
# image's own node (npm_config_nodedir), so that nothing else is downloaded; the compiler's leftovers
# (25 MB) are dropped.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm_config_nodedir=/usr/local npm ci --omit=dev \
 && npm cache clean --force \
 && rm -rf node_modules/better-sqlite3/build/Release/obj* node_modules/better-sqlite3/deps

# The app alone: no compiler, no npm cache, owned by root and run by node (the base image's user, 1000).
FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY package.json package-lock.json README.md ./
COPY src ./src
# Only the default ./data is created at start (config.ts): /data must exist, and be the user's.
RUN mkdir /data && chown node:node /data
VOLUME /data
ENV DATABASE_URL=/data/mailroom.db
# By number, so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 3000
# The API's health (PORT); a worker (--role worker) answers on WORKER_HEALTH_PORT instead: see compose.yaml.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# node itself as PID 1, so that SIGTERM reaches the server (not npm, not a shell).
CMD ["node", "--max-semi-space-size=32", "--import", "tsx", "src/main.ts"]
