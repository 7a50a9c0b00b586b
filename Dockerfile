# syntax=docker/dockerfile:1
#
# mcp-auth-gateway image.
#   docker build -t mcp-auth-gateway:0.1.0 --build-arg VERSION=0.1.0 --build-arg REVISION="$(git rev-parse HEAD)" .
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp \
#     -v "$PWD/config/sidecar.yaml:/etc/mcp-auth-gateway/config.yaml:ro" mcp-auth-gateway:0.1.0
#
# The config file is read from /etc/mcp-auth-gateway/config.yaml (mount it; the image ships none). Secrets in it
# are ${env:NAME} / ${file:/path} references: pass them with -e or mount them as files.
# Runs as UID/GID 10001, writes nothing outside /tmp, so `--read-only --tmpfs /tmp` (or Kubernetes
# readOnlyRootFilesystem with an emptyDir at /tmp) works. Node is PID 1 and handles SIGTERM/SIGINT (graceful
# shutdown) and SIGHUP (config reload) itself.

ARG NODE_VERSION=22

# ---- build: full toolchain, dev dependencies, TypeScript → dist/
FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies only, compiled output, no sources or dev tooling
FROM node:${NODE_VERSION}-bookworm-slim AS runtime

# Re-declared: an ARG before the first FROM is visible only in FROM lines.
ARG NODE_VERSION
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="mcp-auth-gateway" \
      org.opencontainers.image.description="Authenticating reverse proxy that makes any MCP server (Streamable HTTP) an OAuth protected resource" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="docker.io/library/node:${NODE_VERSION}-bookworm-slim"

ENV NODE_ENV=production
WORKDIR /app

# No production dependency has an install script, so none is allowed to run.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force

COPY --from=build /src/dist ./dist
COPY bin ./bin
COPY schema ./schema
COPY config ./config

# Files stay root-owned and read-only to the service user: the process cannot modify its own code.
RUN groupadd --system --gid 10001 gateway \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin gateway
USER 10001:10001

# 8080: MCP traffic, /healthz, /readyz, metadata. 9090: admin listener (/metrics), bound to 127.0.0.1 unless
# the config sets admin.host.
EXPOSE 8080 9090

# Docker/Compose only (Kubernetes uses the chart's probes). No curl in the image: Node's fetch does it.
# Override MCP_GATEWAY_HEALTHCHECK_URL when the config's listen.port is not 8080.
ENV MCP_GATEWAY_HEALTHCHECK_URL=http://127.0.0.1:8080/healthz
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.MCP_GATEWAY_HEALTHCHECK_URL, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve", "--config", "/etc/mcp-auth-gateway/config.yaml"]
