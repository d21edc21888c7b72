# syntax=docker/dockerfile:1
# Image of the identity service (@app/identity). Build context: the repository root.
#   docker build -f docker/identity.Dockerfile -t token-auth/identity .
# api.Dockerfile is the same file with APP/PORT changed, plus an upload folder; keep the two
# in step.

ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: the whole workspace with dev dependencies --------------------------------------
FROM ${NODE_IMAGE} AS build
# PNPM_HOME puts the pnpm store at /pnpm/store. pnpm itself comes from corepack, which reads
# the exact version from "packageManager" in package.json.
ENV PNPM_HOME=/pnpm \
    COREPACK_ENABLE_DOWNLOAD_PROMPT=0 \
    CHECKPOINT_DISABLE=1 \
    PRISMA_HIDE_UPDATE_MESSAGE=1
RUN corepack enable
WORKDIR /repo

# Download every package in the lockfile into the store. This layer depends only on the
# lockfile, so source edits do not re-download anything.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch

# The install needs every workspace package.json, so copy the sources now (the
# identity.Dockerfile.dockerignore file keeps node_modules, dist, .turbo, .data, .git and
# artifacts out). The PRISMA_* paths stop @prisma/engines' postinstall from downloading
# native engines: the project uses the Rust-free client and the WASM schema engine.
COPY . .
RUN PRISMA_QUERY_ENGINE_LIBRARY=/dev/null PRISMA_SCHEMA_ENGINE_BINARY=/dev/null \
    pnpm install --frozen-lockfile --offline

# Build this app and the workspace packages it depends on, in dependency order ("pkg..." means
# the package and its dependencies). This runs `prisma generate` for @app/db.
ARG APP=identity
RUN pnpm --filter "@app/${APP}..." run build

# Make a self-contained folder: the app's package (dist/ included), production node_modules,
# and the workspace packages it uses copied in (not symlinked).
# pnpm 10 refuses `pnpm deploy` unless the workspace sets inject-workspace-packages=true. That
# setting is recorded in pnpm-lock.yaml, so turning it on here alone would make
# --frozen-lockfile fail. `--legacy` keeps the pnpm 9 deploy, which copies workspace
# dependencies into the target. If the repository ever sets inject-workspace-packages=true in
# .npmrc (and regenerates the lockfile), drop `--legacy`.
RUN PRISMA_QUERY_ENGINE_LIBRARY=/dev/null PRISMA_SCHEMA_ENGINE_BINARY=/dev/null \
    pnpm --filter "@app/${APP}" deploy --prod --legacy --offline /out
# @app/db finds prisma/migrations by walking up from its own files, and the image puts it at
# /app/prisma/migrations. So the migrate CLI also works from this image:
#   node node_modules/@app/db/dist/cli/migrate.js
# (compose uses the separate migrate image).
RUN mkdir -p /out/prisma && cp -R prisma/migrations /out/prisma/migrations

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node (so the app can shut down gracefully) and reaps
# zombies, so `docker run` works without --init.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# HOST: the apps listen on 127.0.0.1 unless told otherwise, which no other container can reach.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3001
WORKDIR /app
# The files stay owned by root, so the `node` user can read the code but not change it.
COPY --from=build /out /app

USER node
EXPOSE 3001
# Liveness only; readiness (database reachable) is GET /readyz. Slim images have no curl, so
# node's own fetch does the check.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3001)+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/server.js"]
