#!/bin/sh
# Relay's container entrypoint: gives V8 a heap ceiling when the container has no memory limit,
# then runs the command it is given (the image runs `node bin/relay.js start`).
#
# Node sizes V8's heap from the container's memory limit (cgroup) when there is one. Without one it
# sizes it from the host's memory (4 GB on a 24 GB machine), and V8 lets old space fill with garbage
# long before it collects (RSS 225 MB against ~40 MB live over a bench run). A 2048 MB ceiling bounds
# that, and no lower: under 2 GB V8 collects so much more often that Relay served 8-15% fewer small
# requests and half as many Claude Code turns (test/bench/RESULTS.md, "The heap ceiling").
#
# RELAY_MAX_HEAP_MB sets the ceiling (default 2048; 0 leaves V8's own). A --max-old-space-size
# already in NODE_OPTIONS, or a memory limit on the container, is left alone. RELAY_CGROUP_ROOT
# (default /sys/fs/cgroup) is where the limit is read; tests point it elsewhere.
set -eu

heap_mb=${RELAY_MAX_HEAP_MB:-2048}
case $heap_mb in
  '' | *[!0-9]*)
    echo "relay: RELAY_MAX_HEAP_MB must be a whole number of megabytes (0 for V8's own ceiling), got \"$heap_mb\"" >&2
    exit 2
    ;;
esac

cgroup=${RELAY_CGROUP_ROOT:-/sys/fs/cgroup}

# True when the container's memory is not limited (or no cgroup says so).
memory_unlimited() {
  if [ -r "$cgroup/memory.max" ]; then
    # cgroup v2: "max" when unlimited
    [ "$(cat "$cgroup/memory.max")" = max ]
  elif [ -r "$cgroup/memory/memory.limit_in_bytes" ]; then
    # cgroup v1: unlimited reads as 2^63 rounded down to a page
    [ "$(cat "$cgroup/memory/memory.limit_in_bytes")" -ge 4611686018427387904 ]
  else
    true
  fi
}

case " ${NODE_OPTIONS:-} " in
  *' --max-old-space-size='* | *' --max_old_space_size='*) ;;
  *)
    if [ "$heap_mb" -gt 0 ] && memory_unlimited; then
      NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--max-old-space-size=$heap_mb"
      export NODE_OPTIONS
    fi
    ;;
esac

exec "$@"
