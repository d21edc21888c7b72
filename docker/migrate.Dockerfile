# syntax=docker/dockerfile:1
# One-shot job that applies prisma/migrations to DATABASE_URL, then exits (0 = up to date).
# Build context: the repository root.
#   docker build -f docker/migrate.Dockerfile -t token-auth/migrate .
#   docker run --rm -e DATABASE_URL=postgresql://... token-auth/migrate
# Its package is @app/db, whose dist/cli/migrate.js is the project's migration applier (it needs
# only `pg`). identity.Dockerfile and api.Dockerfile share the build stage line for line up to
# `ARG APP`, so a builder with a layer cache (BuildKit, podman) runs it once for all three
# images. Keep the three in step.

# Any Debian-based Node.js 20.19+ image with npm; CI passes its own (.ci/containers/run.sh).
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: the whole workspace with dev dependencies --------------------------------------
FROM ${NODE_IMAGE} AS build
# PNPM_HOME puts the pnpm store at /pnpm/store. The PRISMA_* variables stop @prisma/engines'
# postinstall (run by `pnpm fetch` and `pnpm install`) and the CLI from downloading native
# engines: the project uses the Rust-free client and the WASM schema engine (prisma.config.ts).
ENV PNPM_HOME=/pnpm \
    PATH=/pnpm:$PATH \
    CI=true \
    COREPACK_ENABLE_DOWNLOAD_PROMPT=0 \
    CHECKPOINT_DISABLE=1 \
    PRISMA_HIDE_UPDATE_MESSAGE=1 \
    PRISMA_QUERY_ENGINE_LIBRARY=/dev/null \
    PRISMA_SCHEMA_ENGINE_BINARY=/dev/null \
    PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING=1
WORKDIR /repo

# pnpm at the exact version of "packageManager" in package.json, installed with npm, which
# every Node.js image has (corepack is gone from Node.js 25 and needs its own download).
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN want="$(node -p "require('./package.json').packageManager.split('@')[1]")" \
 && if [ "$(pnpm --version 2>/dev/null)" != "$want" ]; then \
      npm install --global --no-fund --no-audit --loglevel=error "pnpm@$want"; \
    fi \
 && pnpm --version

# Download every package in the lockfile into the store. This layer depends only on the
# lockfile, so source edits do not re-download anything.
RUN pnpm fetch

# The install needs every workspace package.json, so copy the sources now (the
# <Dockerfile>.dockerignore file keeps node_modules, dist, .turbo, .data, .git and artifacts out).
COPY . .
RUN pnpm install --frozen-lockfile --offline

# Build both services and the workspace packages they use, in dependency order ("pkg..." means
# the package and its dependencies; @app/db's build runs `prisma generate`). One step for the
# three images, so compose (or CI) compiles each package once.
RUN pnpm --filter "@app/identity..." --filter "@app/api..." run build

# ---- from here on the three Dockerfiles differ -------------------------------------------------
ARG APP=db
# See identity.Dockerfile for the deploy and the pruning.
RUN pnpm --filter "@app/${APP}" --config.inject-workspace-packages=true deploy --prod --offline /out \
 && node docker/prune-deploy.mjs /out
# The applier looks for prisma/migrations in the folders above dist/cli/migrate.js:
# /app/dist/cli -> /app/dist -> /app, where it finds /app/prisma/migrations.
RUN mkdir -p /out/prisma && cp -R prisma/migrations /out/prisma/migrations

# ---- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /out /app
USER node
# A short-lived job, not a server: no health check. It needs no init either, because
# nothing sends it signals during its few seconds of work.
HEALTHCHECK NONE
CMD ["node", "dist/cli/migrate.js"]
