#!/usr/bin/env bash
# Stop what evals/docker/setup.sh started: the evals' containers, then the dockerd it started by hand (by its
# pid; a docker daemon that was already running is left alone). Safe to run twice, or when nothing was started.
set -uo pipefail

STATE="${EVALS_DOCKER_STATE:-/var/tmp/coder-agent-evals-docker}"
marker="$STATE/started-dockerd"
[ -f "$marker" ] || { echo "== docker stop: no dockerd of ours to stop"; exit 0; }
pid="$(cat "$marker")"

if kill -0 "$pid" 2>/dev/null; then
    left="$(docker ps -aq --filter label=coder-agent-evals 2>/dev/null || true)"
    [ -z "$left" ] || docker rm -f $left >/dev/null 2>&1 || true
    kill -TERM "$pid"
    for _ in $(seq 1 60); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "== docker stop: dockerd $pid did not stop in 30 s: killed" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
fi
rm -f "$marker"
echo "== docker stop: dockerd $pid stopped"
