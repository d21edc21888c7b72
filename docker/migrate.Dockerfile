# syntax=docker/dockerfile:1
# One-shot job that applies prisma/migrations to DATABASE_URL, then exits (0 = up to date).
# Build context: the repository root.
#   docker build -f docker/migrate.Dockerfile -t token-auth/migrate .
#   docker run --rm -e DATABASE_URL=postgresql://... token-auth/migrate
# The build stage matches identity.Dockerfile (see the comments there); only the package
# differs: @app/db, whose dist/cli/migrate.js is the project's migration applier (it needs only `pg`).

ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
ENV PNPM_HOME=/pnpm \
    COREPACK_ENABLE_DOWNLOAD_PROMPT=0 \
    CHECKPOINT_DISABLE=1 \
    PRISMA_HIDE_UPDATE_MESSAGE=1
RUN corepack enable
WORKDIR /repo

COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch

COPY . .
RUN PRISMA_QUERY_ENGINE_LIBRARY=/dev/null PRISMA_SCHEMA_ENGINE_BINARY=/dev/null \
    pnpm install --frozen-lockfile --offline
RUN pnpm --filter "@app/db..." run build
# --legacy: pnpm 10 deploy without inject-workspace-packages (see identity.Dockerfile).
RUN PRISMA_QUERY_ENGINE_LIBRARY=/dev/null PRISMA_SCHEMA_ENGINE_BINARY=/dev/null \
    pnpm --filter "@app/db" deploy --prod --legacy --offline /out
# The applier looks for prisma/migrations in the folders above dist/cli/migrate.js:
# /app/dist/cli -> /app/dist -> /app, where it finds /app/prisma/migrations.
RUN mkdir -p /out/prisma && cp -R prisma/migrations /out/prisma/migrations

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /out /app
USER node
# A short-lived job, not a server: no health check. It needs no init either, because
# nothing sends it signals during its few seconds of work.
HEALTHCHECK NONE
CMD ["node", "dist/cli/migrate.js"]
