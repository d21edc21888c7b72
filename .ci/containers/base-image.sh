#!/usr/bin/env bash
# Builds CI's stand-in for the official Node.js image the Dockerfiles start from
# (NODE_IMAGE=node:24-bookworm-slim), because CI's machine can pull no registry image:
# Debian bookworm made with `debootstrap --variant=minbase` from the machine's Debian mirror,
# plus the machine's own node, npm and corepack, a `node` user (uid 1000, as in the official
# images) and the machine's CA bundle (its HTTPS egress goes through a proxy with its own CA,
# which npm and pnpm in the build stage must trust).
#   .ci/containers/base-image.sh <image name>
# The image carries a label with a hash of its inputs; when an image of that name and hash
# exists it is kept, so a second run skips debootstrap while a clean machine builds it.
# BASE_IMAGE_REBUILD=1 builds it anew.
set -euo pipefail
image="${1:?usage: base-image.sh <image name>}"
suite=bookworm
recipe=2 # raise when this script changes what goes into the image

node_bin="$(readlink -f "$(command -v node)")"
npm_root="$(npm root -g)"
certs=/etc/ssl/certs/ca-certificates.crt

# The mirror the machine's apt uses (deb822 or one-line sources), else Debian's.
mirror="$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}'
  } | grep -v -- '-security' | grep '/debian/\?$' | head -1
)" || true
mirror="${mirror:-http://deb.debian.org/debian}"
security="${mirror%/debian*}/debian-security"

key="$(
  {
    echo "$recipe $suite $mirror"
    sha256sum "$node_bin"
    cat "$npm_root/npm/package.json" "$npm_root/corepack/package.json" 2>/dev/null | sha256sum
    [ -f "$certs" ] && sha256sum "$certs"
  } | sha256sum | cut -c1-16
)"
label=org.token-auth.ci-base
if [ "${BASE_IMAGE_REBUILD:-0}" != 1 ] &&
  [ "$(podman image inspect --format "{{index .Labels \"$label\"}}" "$image" 2>/dev/null || true)" = "$key" ]; then
  echo "base image $image is up to date ($key)"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "debootstrap --variant=minbase $suite from $mirror"
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log"
  exit 1
}
cat >"$rootfs/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security $suite-security main
EOF

# Node.js where the official images have it.
install -D -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
mkdir -p "$rootfs/usr/local/lib/node_modules"
for tool in npm corepack; do
  [ -d "$npm_root/$tool" ] && cp -a "$npm_root/$tool" "$rootfs/usr/local/lib/node_modules/"
done
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
[ -d "$rootfs/usr/local/lib/node_modules/corepack" ] &&
  ln -sf ../lib/node_modules/corepack/dist/corepack.js "$rootfs/usr/local/bin/corepack"
[ -f "$certs" ] && install -D -m 0644 "$certs" "$rootfs/etc/ssl/certs/ca-certificates.crt"

chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# node runs inside the new root: every shared library it links is there.
env -i PATH=/usr/local/bin:/usr/bin:/bin "$(command -v chroot)" "$rootfs" node -e 'process.exit(0)' || {
  echo "node does not run in the base image; it needs: $(ldd "$node_bin" | awk '/=>/ {print $1}' | xargs)" >&2
  exit 1
}

# What a slim image leaves out: documentation, translations, apt's downloaded lists and caches.
rm -rf "$rootfs"/usr/share/{doc,man,info,locale}/* "$rootfs"/var/cache/apt/* \
  "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* "$rootfs"/tmp/*

changes=(--change "LABEL $label=$key" --change 'CMD ["node"]'
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
[ -f "$certs" ] && changes+=(--change "ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt")
tar --numeric-owner -C "$rootfs" -c . | podman import "${changes[@]}" - "$image" >/dev/null
echo "base image $image built ($key, node $("$node_bin" --version))"
