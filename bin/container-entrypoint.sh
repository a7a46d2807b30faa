#!/bin/sh
# Relay's container entrypoint: gives V8 a heap ceiling of 2048 MB, or half the container's memory
# limit when that is less, then runs the command it is given (the image runs `node bin/relay.js start`).
# Why: V8 left to size its own heap collects far more often under 2 GB, and Relay then serves fewer
# requests (test/bench/RESULTS.md, "The heap ceiling"); half a limit leaves the rest for buffers.
#
# RELAY_MAX_HEAP_MB sets the 2048 (0: V8's own). Left alone: a --max-old-space-size already in
# NODE_OPTIONS, a limit under 512 MB or one that does not read as a number (V8 then takes a quarter
# of it). RELAY_CGROUP_ROOT (default /sys/fs/cgroup) is where the limit is read; tests point it elsewhere.
#
# It also has glibc's malloc keep freed memory (blocks up to 4 MB on its heap, up to 64 MB freed at
# its top), unless set already: agent-sized bodies otherwise land in freshly faulted pages
# (test/bench/RESULTS.md, "Page faults on agent-sized bodies").
set -eu

: "${MALLOC_MMAP_THRESHOLD_:=4194304}"
: "${MALLOC_TRIM_THRESHOLD_:=67108864}"
export MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_

heap_mb=${RELAY_MAX_HEAP_MB:-2048}
case $heap_mb in
  '' | *[!0-9]*)
    echo "relay: RELAY_MAX_HEAP_MB must be a whole number of megabytes (0 for V8's own ceiling), got \"$heap_mb\"" >&2
    exit 2
    ;;
esac

cgroup=${RELAY_CGROUP_ROOT:-/sys/fs/cgroup}

# The container's memory limit in MB; "none" when it is not limited (or no cgroup says so),
# "unknown" when the file does not read as a number.
memory_limit_mb() {
  if [ -r "$cgroup/memory.max" ]; then
    limit=$(cat "$cgroup/memory.max")
    # cgroup v2: "max" when unlimited
    [ "$limit" = max ] && limit=none
  elif [ -r "$cgroup/memory/memory.limit_in_bytes" ]; then
    limit=$(cat "$cgroup/memory/memory.limit_in_bytes")
    # cgroup v1: unlimited reads as 2^63 rounded down to a page (19 digits)
    [ ${#limit} -ge 19 ] && limit=none
  else
    limit=none
  fi
  case $limit in
    none) echo none ;;
    '' | *[!0-9]*) echo unknown ;;
    *) echo $((limit / 1048576)) ;;
  esac
}

limit_mb=$(memory_limit_mb)
case $limit_mb in
  none) ;;
  unknown) heap_mb=0 ;;
  *)
    if [ "$limit_mb" -lt 512 ]; then
      heap_mb=0
    elif [ $((limit_mb / 2)) -lt "$heap_mb" ]; then
      heap_mb=$((limit_mb / 2))
    fi
    ;;
esac

case " ${NODE_OPTIONS:-} " in
  *' --max-old-space-size='* | *' --max_old_space_size='*) ;;
  *)
    if [ "$heap_mb" -gt 0 ]; then
      NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--max-old-space-size=$heap_mb"
      export NODE_OPTIONS
    fi
    ;;
esac

exec "$@"
