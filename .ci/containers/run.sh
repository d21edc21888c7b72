#!/usr/bin/env bash
# CI step: the project's images, built from docker/*.Dockerfile with podman, run for real on CI's
# machine (docker/README.md, "CI"). It
#   1. installs podman, runc and debootstrap from apt when missing;
#   2. builds CI's base image (base-image.sh: debootstrap + the machine's Node.js), which stands
#      in for the official Node.js image as the Dockerfiles' NODE_IMAGE;
#   3. builds the migrate, identity and api images from the project's Dockerfiles, and the
#      reverse proxy (Debian's Caddy running docker/Caddyfile, proxy.Containerfile);
#   4. migrates a new database on the machine's PostgreSQL (127.0.0.1:5432) with the migrate
#      image and starts identity x1 and api x2 behind the proxy, against that database and the
#      machine's Redis, every container on the host's network (containers.conf) with a
#      loopback address of its own and free ports;
#   5. signs up, gets a JWT, calls through the proxy and each api replica, kills an api replica
#      while traffic flows, scales identity to 2, and prints build and start times, image sizes
#      and the checks.
# Containers, images and the database it made are removed on exit; the base image is kept
# (base-image.sh rebuilds it when its inputs change). Exits non-zero on the first failed check.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=.ci/containers
export CONTAINERS_CONF="$PWD/$here/containers.conf"
export DEBIAN_FRONTEND=noninteractive

t0=$(date +%s%3N)
now() { date +%s%3N; }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
step() { printf '\n--- %s (%ss)\n' "$*" "$(secs $(($(now) - t0)))"; }
checks=0
pass() {
  checks=$((checks + 1))
  printf '  ok %2d  %s\n' "$checks" "$*"
}
die() {
  printf '  FAILED  %s\n' "$*" >&2
  exit 1
}
report=()
note() { report+=("$*"); }

step "tools"
missing=()
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  # apt's download user cannot write the system temporary directory here; give it one it can.
  apt_tmp="$(mktemp -d)"
  chmod 1777 "$apt_tmp"
  TMPDIR="$apt_tmp" apt-get update -qq
  TMPDIR="$apt_tmp" apt-get install -y -qq podman runc debootstrap >/dev/null
  rm -rf "$apt_tmp"
fi
podman --version
command -v psql >/dev/null || die "psql is needed to create the database"
pg="postgresql://postgres@127.0.0.1:5432"
psql "$pg/postgres" -Atqc 'select 1' >/dev/null || die "no PostgreSQL answers at 127.0.0.1:5432"

run="$(date +%s)$$"
db="token_auth_ci_$run"
label="org.token-auth.ci-run=$run"
prefix="localhost/token-auth-ci"
base="$prefix/node:bookworm"
work="$(mktemp -d)"
images_before="$(podman images -a -q --no-trunc | sort -u)"

cleanup() {
  status=$?
  set +e
  step "clean up"
  [ -n "${traffic_pid:-}" ] && kill "$traffic_pid" 2>/dev/null
  podman ps -a -q --filter "label=$label" | xargs -r podman rm -f -t 0 >/dev/null 2>&1
  # Every image that appeared during the run (its tags and build layers), never the base image.
  comm -13 <(echo "$images_before") <(podman images -a -q --no-trunc | sort -u) |
    grep -v "$(podman image inspect --format '{{.Id}}' "$base" 2>/dev/null || echo none)" |
    xargs -r podman rmi -f >/dev/null 2>&1
  psql "$pg/postgres" -Atqc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null
  psql "$pg/postgres" -Atqc "DROP ROLE IF EXISTS \"${db}_identity\"" >/dev/null
  psql "$pg/postgres" -Atqc "DROP ROLE IF EXISTS \"${db}_api\"" >/dev/null
  if [ -n "${redis_url:-}" ] && command -v redis-cli >/dev/null; then
    redis-cli -u "$redis_url" --scan --pattern "ci-containers-$run:*" | xargs -r redis-cli -u "$redis_url" del >/dev/null
  fi
  rm -rf "$work"
  echo "containers, images and database $db removed ($(secs $(($(now) - t0))) s in all)"
  exit "$status"
}
trap cleanup EXIT

step "base image"
started=$(now)
"$here/base-image.sh" "$base"
note "base image      $(secs $(($(now) - started))) s  ($base, $(podman image inspect --format '{{.Size}}' "$base" | awk '{printf "%.0f MB", $1/1e6}'))"

step "images"
build() { # name dockerfile [context]
  local name="$1" file="$2" context="${3:-.}" started
  started=$(now)
  local ignore=()
  [ -f "$file.dockerignore" ] && ignore=(--ignorefile "$file.dockerignore")
  if ! podman build --network=host --pull=never --format=docker --layers \
    "${ignore[@]}" --build-arg "NODE_IMAGE=$base" --build-arg "BASE=$base" \
    -f "$file" -t "$prefix/$name:$run" "$context" >"$work/build-$name.log" 2>&1; then
    tail -40 "$work/build-$name.log"
    die "podman build $file"
  fi
  note "build $name$(printf '%*s' $((10 - ${#name})) '') $(secs $(($(now) - started))) s"
}
# The three share their build stage up to `ARG APP` (the first build runs it, the others reuse
# its layers), so the first one takes the longest.
build migrate docker/migrate.Dockerfile
build identity docker/identity.Dockerfile
build api docker/api.Dockerfile
build proxy "$here/proxy.Containerfile" "$here"
for name in migrate identity api; do
  bytes=$(podman image inspect --format '{{.Size}}' "$prefix/$name:$run")
  mb=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1e6 }')
  note "size $name$(printf '%*s' $((11 - ${#name})) '') $mb MB"
  [ "$bytes" -le 250000000 ] || die "$name image is $mb MB, over 250 MB"
  pass "$name image $mb MB (at most 250 MB)"
  # What the build stage's pruning removed (absent when that step came from the layer cache).
  sed -n "s/^prune-deploy: \(.* -> .*\)/  $name: deployed folder \1/p" "$work/build-$name.log"
done

step "database"
psql "$pg/postgres" -Atqc "CREATE DATABASE \"$db\"" >/dev/null
started=$(now)
migrate() { podman run --rm --read-only --label "$label" -e "DATABASE_URL=$pg/$db" "$prefix/migrate:$run" 2>>"$work/podman.log"; }
migrate >"$work/migrate.log" || die "the migrate image failed: $(cat "$work/migrate.log")"
note "migrate         $(secs $(($(now) - started))) s"
sed 's/^/  /' "$work/migrate.log"
{ migrate >"$work/migrate-again.log" && grep -q 'up to date' "$work/migrate-again.log"; } ||
  die "a second migrate run did not find the database up to date: $(cat "$work/migrate-again.log")"
pass "migrate image applied every migration; a second run finds the database up to date"
# Login roles of this database only, members of the service roles (as @app/db/testing makes
# them): the shared server's auth_identity / auth_api keep their passwords. Trust auth on
# 127.0.0.1 needs none.
psql "$pg/$db" -Atq >/dev/null <<SQL
CREATE ROLE "${db}_identity" LOGIN IN ROLE auth_identity;
CREATE ROLE "${db}_api" LOGIN IN ROLE auth_api;
SQL

redis_url=""
if (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then redis_url=redis://127.0.0.1:6379; fi
echo "  Redis: ${redis_url:-none answers at 127.0.0.1:6379, identity counts in process}"

step "start identity x1, api x2, proxy"
read -r identity_port api_port caddy_port < <(node -e '
  const net = require("node:net");
  const servers = [0, 1, 2].map(() => net.createServer());
  Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "0.0.0.0", r)))).then(() => {
    console.log(servers.map((s) => s.address().port).join(" "));
    for (const s of servers) s.close();
  });')
proxy="http://127.0.0.1:$caddy_port"
# Each replica listens on its own loopback address, as each compose container has its own IP;
# the proxy finds them by name in a hosts file run.sh keeps, as compose's proxy asks Docker's DNS.
identity_ip() { echo "127.0.1.$1"; }
api_ip() { echo "127.0.2.$1"; }
hosts() { # the replicas the proxy can resolve, written in place (the file is bind-mounted)
  {
    echo "127.0.0.1 localhost"
    for i in "$@"; do echo "$i"; done
  } >"$work/hosts"
}
secret() { node -e 'console.log(require("node:crypto").randomBytes(36).toString("base64"))'; }
auth_secret="$(secret)"
data_key="$(secret)"
mkdir -p "$work/uploads" && chown 1000:1000 "$work/uploads"

# Without systemd podman cannot schedule the images' HEALTHCHECK and says so on every start;
# run.sh runs the checks itself (podman healthcheck run). Those lines go to podman.log.
podman_log="$work/podman.log"
common=(--label "$label" --read-only --cap-drop=all --security-opt=no-new-privileges
  -e "BASE_URL=$proxy" -e LOG_LEVEL=info)
[ -n "$redis_url" ] && common+=(-e "REDIS_URL=$redis_url")

wait_ready() { # url seconds
  local deadline=$(($(now) + $2 * 1000))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" || true)" = 200 ]; do
    [ "$(now)" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}
start_identity() { # n
  local started
  started=$(now)
  podman run -d --name "ci-$run-identity-$1" "${common[@]}" \
    -e "HOST=$(identity_ip "$1")" -e "PORT=$identity_port" \
    -e "DATABASE_URL=postgresql://${db}_identity@127.0.0.1:5432/$db" \
    -e "AUTH_SECRET=$auth_secret" -e "RATE_LIMIT_REDIS_PREFIX=ci-containers-$run:" \
    -e REQUIRE_EMAIL_VERIFICATION=false \
    "$prefix/identity:$run" >/dev/null 2>>"$podman_log" || die "podman run identity-$1: $(tail -3 "$podman_log")"
  wait_ready "http://$(identity_ip "$1"):$identity_port/readyz" 60 || {
    podman logs "ci-$run-identity-$1" 2>&1 | tail -20
    die "identity-$1 is not ready"
  }
  note "start identity-$1  $(secs $(($(now) - started))) s (podman run to /readyz 200)"
}
start_api() { # n
  local started
  started=$(now)
  podman run -d --name "ci-$run-api-$1" "${common[@]}" \
    -e "HOST=$(api_ip "$1")" -e "PORT=$api_port" \
    -e "DATABASE_URL=postgresql://${db}_api@127.0.0.1:5432/$db" \
    -e "IDENTITY_URL=$proxy" -e "DATA_ENCRYPTION_KEY=$data_key" \
    -v "$work/uploads:/data/uploads" \
    "$prefix/api:$run" >/dev/null 2>>"$podman_log" || die "podman run api-$1: $(tail -3 "$podman_log")"
  wait_ready "http://$(api_ip "$1"):$api_port/readyz" 60 || {
    podman logs "ci-$run-api-$1" 2>&1 | tail -20
    die "api-$1 is not ready"
  }
  note "start api-$1       $(secs $(($(now) - started))) s (podman run to /readyz 200)${2:-}"
}

start_identity 1
start_api 1
start_api 2
hosts "$(identity_ip 1) identity" "$(api_ip 1) api" "$(api_ip 2) api"
# docker/Caddyfile with two edits: Debian's Caddy 2.6.2 has no `trusted_proxies` server option
# (2.6.3), and on the host's network the proxy listens on loopback only.
grep -c 'trusted_proxies static' docker/Caddyfile | grep -qx 1 || die "docker/Caddyfile changed: update run.sh's edits"
sed -e '/trusted_proxies static/d' -e 's/^\tauto_https off$/\tauto_https off\n\tdefault_bind 127.0.0.1/' \
  docker/Caddyfile >"$work/Caddyfile"
grep -q 'default_bind 127.0.0.1' "$work/Caddyfile" || die "docker/Caddyfile changed: update run.sh's edits"
started=$(now)
podman run -d --name "ci-$run-proxy" --label "$label" --read-only --cap-drop=all --security-opt=no-new-privileges \
  -v "$work/Caddyfile:/etc/caddy/Caddyfile:ro" -v "$work/hosts:/etc/hosts:ro" \
  -e "CADDY_PORT=$caddy_port" -e "IDENTITY_PORT=$identity_port" -e "API_PORT=$api_port" \
  "$prefix/proxy:$run" >/dev/null 2>>"$podman_log" || die "podman run proxy: $(tail -3 "$podman_log")"
wait_ready "$proxy/api/auth/jwks" 30 || {
  podman logs "ci-$run-proxy" 2>&1 | tail -20
  die "the proxy does not answer"
}
note "start proxy     $(secs $(($(now) - started))) s"
pass "identity-1, api-1, api-2 ready on their own loopback addresses; the proxy answers on $proxy"

for name in identity-1 api-1 api-2; do
  c="ci-$run-$name"
  [ "$(podman inspect --format '{{.Config.User}} {{.HostConfig.ReadonlyRootfs}}' "$c")" = "node true" ] ||
    die "$name does not run as node on a read-only root filesystem"
  [ "$(podman exec "$c" id -u)" = 1000 ] || die "$name runs as uid $(podman exec "$c" id -u)"
  ! podman exec "$c" touch /app/probe 2>/dev/null || die "$name can write /app"
  podman healthcheck run "$c" >/dev/null || die "$name health check fails"
done
pass "each app container runs as node (uid 1000), cannot write its root filesystem, and its HEALTHCHECK passes"

step "through the proxy"
out="$(node "$here/flow.mjs" session "$proxy")" || die "sign-up flow: $out"
jwt="$(node -p 'JSON.parse(process.argv[1]).jwt' "$out")"
cookie="$(node -p 'JSON.parse(process.argv[1]).cookie' "$out")"
pass "sign-up, get-session's set-auth-jwt, /api/me, POST and GET /api/tasks, JWKS through the proxy"
out="$(node "$here/flow.mjs" me "$jwt" "http://$(api_ip 1):$api_port" "http://$(api_ip 2):$api_port")" || die "$out"
pass "the JWT works on api-1 and api-2 called directly"

access_lines() { # container path: access lines of that path in its log
  podman logs "ci-$run-$1" 2>/dev/null | grep -c "\"url\":\"$2" || true
}
out="$(node "$here/flow.mjs" repeat "$proxy" "$jwt" 20)" || die "$out"
deadline=$(($(now) + 5000))
while :; do
  a1=$(access_lines api-1 /api/me) a2=$(access_lines api-2 /api/me)
  [ "$a1" -gt 0 ] && [ "$a2" -gt 0 ] && break
  [ "$(now)" -lt "$deadline" ] || die "requests through the proxy reached api-1 $a1 times, api-2 $a2 times"
  sleep 0.2
done
pass "20 calls through the proxy: every one 200, served by both replicas (api-1 $a1, api-2 $a2 /api/me lines)"

step "kill api-2 while traffic flows"
mkdir "$work/traffic"
node "$here/flow.mjs" traffic "$proxy" "$jwt" "$work/traffic" >"$work/traffic.json" &
traffic_pid=$!
deadline=$(($(now) + 30000))
until [ -f "$work/traffic/ready" ]; do
  [ "$(now)" -lt "$deadline" ] || die "no traffic flows"
  sleep 0.05
done
podman kill --signal KILL "ci-$run-api-2" >/dev/null
now >"$work/traffic/killed"
# What Docker's DNS does when a container stops: its name no longer resolves to it. The proxy
# has dropped api-2 once Go re-reads the hosts file (it checks it every 5 s) and Caddy resolves
# `dynamic a` again (every 5 s, docker/Caddyfile); until then a dial to api-2 is retried on api-1.
hosts "$(identity_ip 1) identity" "$(api_ip 1) api"
echo $(($(now) + 10500)) >"$work/traffic/noticed"
# Traffic goes on for 5 s past that point, and none of it may fail.
sleep 16
touch "$work/traffic/stop"
wait "$traffic_pid" || {
  traffic_pid=""
  podman logs "ci-$run-proxy" 2>&1 | tail -5
  die "traffic: $(cat "$work/traffic.json")"
}
traffic_pid=""
summary="$(node -p 'const s = JSON.parse(process.argv[1]);
  `${s.requests} requests, ${s.afterKill} after the kill; ${s.failed} failed in the ${(s.noticeMs / 1000).toFixed(1)} s ` +
  `the proxy may take to drop api-2${s.failed ? ` (${s.failures.join(", ")})` : ""}, none of the ${s.afterNotice} after`' \
  "$(cat "$work/traffic.json")")"
note "kill api-2      $summary"
pass "api-2 killed (SIGKILL) under load: $summary"
# The proxy really dropped api-2 (rather than retrying it): a new api-2 on the same address and
# port, not in the proxy's names, gets none of the next 20 calls.
podman rm -f -t 0 "ci-$run-api-2" >/dev/null 2>>"$podman_log"
start_api 2 ", again, outside the proxy's names"
out="$(node "$here/flow.mjs" repeat "$proxy" "$jwt" 20)" || die "$out"
sleep 0.5 # the access log's flush interval (packages/http-kit/src/logger.ts)
[ "$(access_lines api-2 /api/me)" = 0 ] || die "the proxy still sends requests to api-2's address"
pass "20 more calls through the proxy: every one 200, none to a new api-2 on the old address"

step "scale identity to 2"
start_identity 2
hosts "$(identity_ip 1) identity" "$(identity_ip 2) identity" "$(api_ip 1) api"
started=$(now)
deadline=$(($(now) + 30000))
until [ "$(access_lines identity-2 /api/auth/get-session)" -gt 0 ]; do
  [ "$(now)" -lt "$deadline" ] || die "the proxy sent identity-2 no request within 30 s"
  out="$(node "$here/flow.mjs" identity "$proxy" "$cookie" 4)" || die "$out"
done
note "identity-2 in   $(secs $(($(now) - started))) s (added to the proxy's names to its first request)"
out="$(node "$here/flow.mjs" identity "$proxy" "$cookie" 10)" || die "$out"
i1=$(access_lines identity-1 /api/auth/get-session) i2=$(access_lines identity-2 /api/auth/get-session)
[ "$i1" -gt 0 ] && [ "$i2" -gt 0 ] || die "get-session reached identity-1 $i1 times, identity-2 $i2 times"
pass "identity scaled to 2: both serve get-session through the proxy (identity-1 $i1, identity-2 $i2 lines), every JWT works at /api/me"
podman healthcheck run "ci-$run-identity-2" >/dev/null || die "identity-2 health check fails"
pass "identity-2's HEALTHCHECK passes"

step "report"
for line in "${report[@]}"; do echo "  $line"; done
echo "  $checks checks passed in $(secs $(($(now) - t0))) s"
