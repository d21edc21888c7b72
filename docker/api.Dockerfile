# syntax=docker/dockerfile:1
# Image of the api service (@app/api). Build context: the repository root.
#   docker build -f docker/api.Dockerfile -t token-auth/api .
# identity.Dockerfile is the same file with APP/PORT changed, plus the upload folder here.
# identity.Dockerfile and migrate.Dockerfile share the build stage line for line up to `ARG APP`, so
# a builder with a layer cache (BuildKit, podman) runs it once for all three images. Keep the
# three in step.

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
ARG APP=api

# A self-contained folder: the app's package (dist/ included), its production node_modules and
# the workspace packages it uses, copied in. pnpm 10 deploys only with inject-workspace-packages;
# set on the command line it leaves the workspace's lockfile as it is.
# deploy --prod also copies the optional peers auto-install-peers=true (.npmrc) put in the
# lockfile: the prisma CLI with effect and typescript, about 110 MB the app never loads.
# prune-deploy.mjs removes them, TypeScript sources and declarations, source maps and Prisma's
# engines for other databases (its header lists what and why).
RUN pnpm --filter "@app/${APP}" --config.inject-workspace-packages=true deploy --prod --offline /out \
 && node docker/prune-deploy.mjs /out
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
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin

# HOST: the apps listen on 127.0.0.1 unless told otherwise, which no other container can reach.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3002
WORKDIR /app
# The files stay owned by root, so the `node` user can read the code but not change it. The
# root filesystem can be read-only (compose.yaml): uploads are the api's only writes to disk.
COPY --from=build /out /app
# /data/uploads belongs to `node`, and a named volume mounted there copies that ownership on
# first use (compose shares one volume between all api replicas).
ENV UPLOAD_DIR=/data/uploads
RUN mkdir -p /data/uploads && chown -R node:node /data

USER node
EXPOSE 3002
# Liveness only; readiness (database reachable) is GET /readyz. Slim images have no curl, so
# node's own fetch does the check.
# It asks HOST unless that is a wildcard address.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "const h=process.env.HOST||'';const a=/^(0\\.0\\.0\\.0|::|)$/.test(h)?'127.0.0.1':h.includes(':')?'['+h+']':h;fetch('http://'+a+':'+(process.env.PORT||3002)+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/server.js"]
