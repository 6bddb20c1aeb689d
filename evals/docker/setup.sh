#!/usr/bin/env bash
# Docker for the evals' container path, from nothing on a Debian machine, as root, with only the package
# registries reachable (no image registry): what CI runs, and what a developer runs once.
#
#   bash evals/docker/setup.sh            docker, the compose v2 plugin, a running dockerd, the base image
#   bash evals/docker/setup.sh --harbor   the same, and Harbor in its own virtualenv (Python >= 3.12)
#   bash evals/docker/stop.sh             stop the dockerd this script started (and nothing else)
#
# Each step is skipped when its result is already there, and each prints how long it took. What does not depend
# on another runs beside it: Harbor from the start; after the packages and dockerd, the compose plugin beside
# the base image.
#
# - Debian 12's docker.io, mmdebstrap and iptables; Debian 13's docker-compose (v2; Harbor needs `docker
#   compose`), taken with a private apt configuration so the system's sources stay as they are.
# - dockerd started by hand (there is no systemd), its pid in $STATE/dockerd.pid for stop.sh.
# - The base image, built without pulling: mmdebstrap writes a Debian trixie root (Python 3.13: Harbor's ACP
#   runner needs >= 3.12 in the image) with python, pytest, git and curl, this machine's locally added CA
#   certificates (outbound TLS may be re-signed), and what Harbor's ACP runner would otherwise download
#   (uv, and a virtualenv with agent-client-protocol); `docker import` makes it an image. (Leaving out the
#   manuals, documentation and translations, as Debian's slim images do, cost mmdebstrap more CPU than it saved.)
# - Harbor with uv (pip took 2-10 minutes of CPU to resolve and lay out its 120 packages; uv takes seconds).
#
# What it writes: $STATE (logs, pids, the private apt lists), $HARBOR_VENV, the packages and their state in
# /var/lib/docker and /var/lib/containerd, and the images there.
set -euo pipefail
cd "$(dirname "$0")/../.."

STATE="${EVALS_DOCKER_STATE:-/var/tmp/coder-agent-evals-docker}"
BASE_IMAGE="${EVALS_BASE_IMAGE:-coder-agent-evals-base:trixie}"
HARBOR_VENV="${EVALS_HARBOR_VENV:-/var/tmp/coder-agent-evals-harbor}"
HARBOR_VERSION="0.26.0"
# The Debian mirror this machine's apt uses (deb822 sources, else sources.list), unless EVALS_DEBIAN_MIRROR names one.
# (Either file may be missing: grep's status must not end the script under pipefail.)
system_mirror() {
    { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources || true
      grep -hs '^deb ' /etc/apt/sources.list | sed 's/\[[^]]*\] *//' || true; } | awk '$2 !~ /-security/ {print $2; exit}'
}
MIRROR="${EVALS_DEBIAN_MIRROR:-$(system_mirror)}"
[ -n "$MIRROR" ] || { echo "no Debian mirror in /etc/apt: set EVALS_DEBIAN_MIRROR" >&2; exit 1; }
mkdir -p "$STATE"
# On the way out (a failed step too): what still runs beside is ended, and the base image's folder goes
# (--one-file-system: never into a mount mmdebstrap might have left in it).
cleanup() {
    local left
    left="$(jobs -pr)"
    [ -z "$left" ] || kill $left 2>/dev/null || true
    [ -z "${work:-}" ] || rm -rf --one-file-system "$work"
}
trap cleanup EXIT

step() { STEP_NAME="$1"; STEP_START=$SECONDS; echo "== docker setup: $1"; }
done_step() { echo "   ${STEP_NAME}: $((SECONDS - STEP_START)) s"; }
need_root() { [ "$(id -u)" = 0 ] || { echo "evals/docker/setup.sh: $1 needs root" >&2; exit 1; }; }

want_harbor=0
for arg in "$@"; do
    case "$arg" in
        --harbor) want_harbor=1 ;;
        *) echo "usage: bash evals/docker/setup.sh [--harbor]" >&2; exit 2 ;;
    esac
done

# Harbor, in its own virtualenv (Python >= 3.12), beside the rest: it only needs PyPI.
install_harbor() {
    local started=$SECONDS
    if ! "$HARBOR_VENV/bin/harbor" --version >/dev/null 2>&1; then
        python=""
        for candidate in python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3 \
            /root/.pyenv/versions/3.12*/bin/python3 /usr/bin/python3; do
            found="$(command -v "$candidate" 2>/dev/null || true)"
            [ -n "$found" ] && "$found" -c 'import sys; raise SystemExit(sys.version_info < (3, 12))' 2>/dev/null \
                && { python="$found"; break; }
        done
        [ -n "$python" ] || { echo "Harbor needs Python >= 3.12: none found (python3.12, python3.13, pyenv)"; return 1; }
        rm -rf "$HARBOR_VENV"
        # uv comes from PyPI like Harbor (pip installs it in seconds); it takes the system's CA bundle, as pip
        # does here, in case outbound TLS is re-signed.
        "$python" -m venv "$HARBOR_VENV" && "$HARBOR_VENV/bin/pip" install -q "uv>=0.5" || return 1
        certs=/etc/ssl/certs/ca-certificates.crt
        [ -f "$certs" ] && export SSL_CERT_FILE="$certs"
        "$HARBOR_VENV/bin/uv" pip install -q --no-cache --python "$HARBOR_VENV/bin/python" "harbor==$HARBOR_VERSION" \
            || return 1
    fi
    echo $((SECONDS - started)) >"$STATE/harbor.seconds"
}
if [ "$want_harbor" = 1 ]; then
    install_harbor >"$STATE/harbor.log" 2>&1 &
    HARBOR_PID=$!
fi

apt_quiet() { DEBIAN_FRONTEND=noninteractive apt-get -q -o Dpkg::Use-Pty=0 "$@" >>"$STATE/apt.log" 2>&1 \
    || { tail -20 "$STATE/apt.log" >&2; return 1; }; }
: >"$STATE/apt.log"

step "packages (docker.io, mmdebstrap, iptables)"
if ! command -v dockerd >/dev/null || ! command -v mmdebstrap >/dev/null || ! command -v iptables >/dev/null; then
    need_root "installing packages"
    apt_quiet update
    apt_quiet install -y --no-install-recommends docker.io mmdebstrap iptables ca-certificates
fi
done_step

# The compose plugin (for Harbor), beside the base image: neither needs the other.
install_compose() {
    local started=$SECONDS
    if ! docker compose version >/dev/null 2>&1; then
        need_root "installing the compose plugin"
        if apt-cache policy docker-compose 2>/dev/null | grep -q 'Candidate: 2\.'; then
            apt_quiet install -y --no-install-recommends docker-compose
        else  # Debian 12 has compose v1 only: Debian 13's v2 package installs here (it needs libc6 alone)
            apt_dir="$STATE/apt-trixie"
            mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
            : >"$apt_dir/none.list"
            printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' \
                "$MIRROR" /usr/share/keyrings/debian-archive-keyring.gpg >"$apt_dir/sources/trixie.sources"
            apt_private=(-o "Dir::Etc::sourcelist=$apt_dir/none.list" -o "Dir::Etc::sourceparts=$apt_dir/sources"
                -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache")
            apt_quiet "${apt_private[@]}" update
            (cd "$apt_dir" && apt_quiet "${apt_private[@]}" download docker-compose)
            dpkg -i "$apt_dir"/docker-compose_*.deb >"$STATE/dpkg.log" 2>&1 || { tail -20 "$STATE/dpkg.log"; return 1; }
        fi
        docker compose version
    fi
    echo $((SECONDS - started)) >"$STATE/compose.seconds"
}

step "dockerd"
if ! docker info >/dev/null 2>&1; then
    need_root "starting dockerd"
    rm -f "$STATE/dockerd.pid"
    # At normal priority even when this script was niced (.ci/run nices it): the containers inherit it.
    # On DOCKER_HOST's socket when it names one (a daemon of your own that other docker clients do not find).
    listen=()
    case "${DOCKER_HOST:-}" in
        "") ;;
        unix://*) listen=(-H "$DOCKER_HOST") ;;
        *) echo "DOCKER_HOST=$DOCKER_HOST: setup.sh starts dockerd on a unix socket only" >&2; exit 1 ;;
    esac
    setsid nice -n "$((-$(nice)))" dockerd "${listen[@]}" --pidfile "$STATE/dockerd.pid" \
        >"$STATE/dockerd.log" 2>&1 </dev/null &
    dockerd_pid=$!
    disown "$dockerd_pid"  # it outlives this script: not one of the jobs ended on the way out
    for _ in $(seq 1 120); do
        docker info >/dev/null 2>&1 && break
        kill -0 "$dockerd_pid" 2>/dev/null || { tail -20 "$STATE/dockerd.log" >&2; echo "dockerd exited" >&2; exit 1; }
        sleep 0.5
    done
    docker info >/dev/null 2>&1 || { tail -20 "$STATE/dockerd.log" >&2; echo "dockerd did not answer in 60 s" >&2; exit 1; }
    cp "$STATE/dockerd.pid" "$STATE/started-dockerd"  # stop.sh stops this one only
fi
done_step

install_compose >"$STATE/compose.log" 2>&1 &
COMPOSE_PID=$!

step "base image $BASE_IMAGE"
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    need_root "building the base image"
    work="$(mktemp -d)"
    # The runner's needs (see harbor/agents/installed/acp.py: /opt/harbor-acp-tools/uv, a Python >= 3.12
    # virtualenv at /opt/harbor-acp-venv that imports acp): baked in, since it would download them from hosts
    # that only a machine with the open internet reaches.
    cat >"$work/customize.sh" <<'HOOK'
#!/bin/sh
set -eu
root="$1"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true
chroot "$root" update-ca-certificates >/dev/null 2>&1
chroot "$root" python3 -m venv /opt/harbor-acp-venv
chroot "$root" env PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    /opt/harbor-acp-venv/bin/pip install -q agent-client-protocol uv
mkdir -p "$root/opt/harbor-acp-tools" "$root/opt/harbor-acp-python"
ln -s /opt/harbor-acp-venv/bin/uv "$root/opt/harbor-acp-tools/uv"
chroot "$root" chmod -R a+rX /opt/harbor-acp-venv
HOOK
    chmod +x "$work/customize.sh"
    # force-unsafe-io: no fsync per unpacked file, as Debian's own container images set it (a throwaway root).
    # Into a folder, not a tarball: tar streams it to `docker import`, and the folder is removed beside what
    # follows (mmdebstrap would pack its own temporary root, then remove it, before handing over).
    mmdebstrap --quiet --variant=apt --format=directory --dpkgopt=force-unsafe-io \
        --include=python3,python3-pytest,python3-venv,python-is-python3,git,ca-certificates,curl,tar,procps \
        --customize-hook="$work/customize.sh \"\$1\"" \
        trixie "$work/root" "$MIRROR" >"$STATE/mmdebstrap.log" 2>&1 \
        || { tail -20 "$STATE/mmdebstrap.log" >&2; exit 1; }
    echo "   mmdebstrap: $((SECONDS - STEP_START)) s"
    tar --numeric-owner --xattrs --xattrs-include='*' -C "$work/root" -c . | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        --change 'ENV PIP_DISABLE_PIP_VERSION_CHECK=1' \
        --change 'CMD ["/bin/bash"]' \
        - "$BASE_IMAGE" >/dev/null
    rm -rf --one-file-system "$work" &
    CLEAN_PID=$!
fi
done_step

step "compose v2 plugin (beside the base image)"
wait "$COMPOSE_PID" || { tail -20 "$STATE/compose.log" >&2; echo "installing the compose plugin failed" >&2; exit 1; }
echo "   compose v2 plugin: $(cat "$STATE/compose.seconds") s"

if [ "$want_harbor" = 1 ]; then
    wait "$HARBOR_PID" || { tail -20 "$STATE/harbor.log" >&2; echo "installing Harbor failed" >&2; exit 1; }
    echo "== docker setup: harbor $("$HARBOR_VENV/bin/harbor" --version) in $HARBOR_VENV" \
        "($(cat "$STATE/harbor.seconds") s, beside the steps above)"
fi
[ -z "${CLEAN_PID:-}" ] || wait "$CLEAN_PID"
echo "== docker setup: done in ${SECONDS} s"
