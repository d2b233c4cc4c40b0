#!/bin/sh
# Bulwark's own supervisor where systemd is not PID 1 (docs/appliance.md, "Without systemd"): runs the API,
# `node <root>/opt/bulwark/current/dist/main.js`, with the startup options of <root>/etc/bulwark/bulwark.env, and
# starts it again 1 s after it exits. A self-update or `POST /updates/appliance/restart` stops the API (SIGTERM):
# the next start takes the release `current` names then. SIGTERM or SIGINT to the supervisor stops both.
#
#   bulwark-supervise.sh [--root DIR] [--node PATH]
#
# Pid files: <root>/run/bulwark/supervisor.pid (this script; how Bulwark knows it is supervised) and
# <root>/run/bulwark/bulwark.pid (the API). Run it detached, its output to the log, e.g.
#   setsid /opt/bulwark/current/install/bulwark-supervise.sh >>/var/log/bulwark/bulwark.log 2>&1 < /dev/null &
set -eu

root=
node=node
while [ "$#" -gt 0 ]; do
  case $1 in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --node) node=${2:?--node needs a path}; shift 2 ;;
    *) echo "bulwark-supervise: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$root" != / ] || root=

# KEY=VALUE lines only (the file is never run as a script); only BULWARK_* names are taken.
env_file="$root/etc/bulwark/bulwark.env"
if [ -f "$env_file" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in ''|'#'*) continue ;; esac
    key=${line%%=*}
    value=${line#*=}
    case $key in BULWARK_*) ;; *) continue ;; esac
    case $key in *[!A-Z0-9_]*) continue ;; esac
    export "$key=$value"
  done < "$env_file"
fi
# The install root the API switches releases under (docs/updates.md).
[ -n "${BULWARK_INSTALL_ROOT:-}" ] || export BULWARK_INSTALL_ROOT="${root:-/}"

run_dir="$root/run/bulwark"
mkdir -p "$run_dir"
child=
stopping=no
stop() {
  stopping=yes
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  rm -f "$run_dir/bulwark.pid" "$run_dir/supervisor.pid"
  exit 0
}
trap stop TERM INT
echo "$$" > "$run_dir/supervisor.pid"

while [ "$stopping" = no ]; do
  "$node" "$root/opt/bulwark/current/dist/main.js" &
  child=$!
  echo "$child" > "$run_dir/bulwark.pid"
  status=0
  wait "$child" || status=$?
  echo "bulwark-supervise: the API (pid $child) exited with status $status; starting $(readlink "$root/opt/bulwark/current" || echo '?') in 1 s" >&2
  sleep 1
done
