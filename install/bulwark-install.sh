#!/usr/bin/env bash
# Turns a Debian 12 machine (Node.js 20 installed) into a Bulwark appliance, or removes what it added.
#
#   sudo ./install/bulwark-install.sh [install] [--root DIR] [--from DIR] [--no-build] [--node PATH]
#   sudo ./install/bulwark-install.sh uninstall [--root DIR] [--purge]
#   ./install/bulwark-install.sh assemble --to DIR [--from DIR] [--no-build]
#
# install lays out (docs/appliance.md, "Install layout"):
#   /opt/bulwark/releases/<version>/   dist/ (server and console), production node_modules, package.json, the boot
#                                      step and the unit templates; /opt/bulwark/current -> releases/<version>
#   /etc/bulwark/bulwark.env           startup options, read by bulwark.service and the boot step (kept if present)
#   /var/lib/bulwark/                  the data directory (0700)
#   /var/lib/bulwark-daemons/          the daemons' runtime tree (0755, traversable by their users)
#   /var/log/bulwark/                  the log file where systemd is not PID 1
#   /etc/systemd/system/bulwark*.service, enabled; Debian's competing units masked (-> /dev/null)
# Everything it creates is listed in /etc/bulwark/install.manifest; uninstall removes exactly that and unmasks
# only the units it masked. Without --purge it keeps the data directory, the logs and bulwark.env (and the
# manifest lines naming them, so a later `uninstall --purge` removes them too).
#
# assemble writes only the release tree (what releases/<version>/ holds) into an empty DIR: `npm run release`
# packs and signs it (docs/updates.md).
# --root DIR installs into another root (tests): every path is prefixed with DIR and systemctl is never run.
# --from DIR takes the release from another source tree (default: this script's repository); --no-build uses its
# dist/ as it is instead of running `npm run build` first.
set -euo pipefail

PREFIX=/opt/bulwark
ETC=/etc/bulwark
DATA_DIR=/var/lib/bulwark
RUNTIME_DIR=/var/lib/bulwark-daemons
LOG_DIR=/var/log/bulwark
UNIT_DIR=/etc/systemd/system
# Debian's own units for the daemons Bulwark runs itself: enabled by apt, they would compete for the same ports
# and files. nftables.service loads /etc/nftables.conf, which starts with `flush ruleset` (it would drop the
# ruleset the boot step loaded).
MASKED_UNITS=(
  unbound.service
  kea-dhcp4-server.service
  kea-dhcp-ddns-server.service
  chrony.service
  caddy.service
  caddy-api.service
  strongswan.service
  strongswan-starter.service
  suricata.service
  ulogd2.service
  nftables.service
)

usage() {
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

action=install
root=
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=yes
node_path=
node=
purge=no
assemble_to=
if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
  action=$1
  shift
fi
while [ "$#" -gt 0 ]; do
  case $1 in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --from) source_dir=${2:?--from needs a directory}; shift 2 ;;
    --no-build) build=no; shift ;;
    --node) node_path=${2:?--node needs a path}; shift 2 ;;
    --purge) purge=yes; shift ;;
    --to) assemble_to=${2:?--to needs a directory}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "bulwark-install: unknown option $1" >&2; usage ;;
  esac
done
case $action in
  install|uninstall) ;;
  assemble) [ -n "$assemble_to" ] || { echo "bulwark-install: assemble needs --to DIR" >&2; usage; } ;;
  *) echo "bulwark-install: unknown action $action (install, uninstall or assemble)" >&2; usage ;;
esac
if [ "$action" = assemble ]; then
  :
elif [ -n "$root" ]; then
  [ -d "$root" ] || { echo "bulwark-install: --root $root is not a directory" >&2; exit 2; }
  root=$(cd "$root" && pwd)
  [ "$root" != / ] || root=
elif [ "$(id -u)" -ne 0 ]; then
  echo "bulwark-install: run as root (or give --root DIR)" >&2
  exit 1
fi

manifest="$root$ETC/install.manifest"
# The live system is managed through systemctl only when systemd runs it and no other root is targeted.
live_systemd() {
  [ -z "$root" ] && [ -d /run/systemd/system ]
}

# One line per thing created: `<kind> <path>`, path inside the target root. Recorded once.
record() {
  local line="$1 $2"
  grep -Fxq -- "$line" "$manifest" 2>/dev/null || printf '%s\n' "$line" >> "$manifest"
}

# Creates a directory and every missing parent, recording each one created (never one that existed).
make_dir() {
  local path=$1 mode=$2 parent
  parent=$(dirname "$path")
  [ -d "$root$parent" ] || make_dir "$parent" 0755
  if [ ! -d "$root$path" ]; then
    mkdir -m "$mode" "$root$path"
    record dir "$path"
  fi
}

# The manifest's own directory comes first: it records itself.
start_manifest() {
  if [ ! -d "$root$ETC" ]; then
    local missing=() path=$ETC
    while [ ! -d "$root$path" ]; do missing=("$path" "${missing[@]}"); path=$(dirname "$path"); done
    for path in "${missing[@]}"; do mkdir -m 0755 "$root$path"; done
    : > "$manifest"
    for path in "${missing[@]}"; do record dir "$path"; done
  fi
  [ -f "$manifest" ] || : > "$manifest"
  chmod 0600 "$manifest"
}

write_env_file() {
  local env_file="$ETC/bulwark.env"
  if [ -e "$root$env_file" ]; then
    echo "keeping $env_file as it is"
    return
  fi
  umask 027
  cat > "$root$env_file" <<ENV
# Bulwark's startup options (README "Startup options"), read by bulwark.service and by the boot step
# (bulwark-boot.service). A flag on the command line wins over these.
BULWARK_DATA_DIR=$DATA_DIR
BULWARK_RUNTIME_DIR=$RUNTIME_DIR
BULWARK_PLATFORM=linux
BULWARK_LISTEN=0.0.0.0:8080
BULWARK_TLS_LISTEN=0.0.0.0:8443
BULWARK_LOG_LEVEL=info
ENV
  umask 022
  chmod 0640 "$root$env_file"
  record file "$env_file"
}

# The release tree (dist/, production node_modules, package.json, the install scripts and units, the appliance
# docs) into the empty directory $1; prints the version. Used by install and by `npm run release` (assemble).
assemble_release() {
  local dest=$1 version
  if [ "$build" = yes ]; then
    (cd "$source_dir" && npm run build) >&2
  fi
  for needed in dist/main.js package.json node_modules; do
    [ -e "$source_dir/$needed" ] || { echo "bulwark-install: $source_dir/$needed is missing (run npm ci and npm run build there)" >&2; exit 1; }
  done
  version=$(node -p 'require(process.argv[1]).version' "$source_dir/package.json")
  case $version in
    ''|.*|*[!A-Za-z0-9._+-]*) echo "bulwark-install: unusable version '$version' in package.json" >&2; exit 1 ;;
  esac
  cp -a "$source_dir/dist" "$dest/dist"
  cp -a "$source_dir/package.json" "$dest/"
  [ ! -f "$source_dir/package-lock.json" ] || cp -a "$source_dir/package-lock.json" "$dest/"
  # The contents of node_modules (a symlink in a development worktree), then only the production dependencies.
  mkdir "$dest/node_modules"
  cp -a "$source_dir/node_modules/." "$dest/node_modules/"
  (cd "$dest" && npm prune --omit=dev --offline --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
  mkdir -p "$dest/install/systemd" "$dest/docs"
  cp -a "$source_dir/install/bulwark-boot.sh" "$source_dir/install/bulwark-install.sh" "$source_dir/install/bulwark-supervise.sh" "$dest/install/"
  cp -a "$source_dir/install/systemd/." "$dest/install/systemd/"
  [ ! -f "$source_dir/docs/appliance.md" ] || cp -a "$source_dir/docs/appliance.md" "$dest/docs/"
  [ ! -f "$source_dir/docs/updates.md" ] || cp -a "$source_dir/docs/updates.md" "$dest/docs/"
  chmod 0755 "$dest/install/bulwark-boot.sh" "$dest/install/bulwark-install.sh" "$dest/install/bulwark-supervise.sh"
  echo "$version"
}

install_release() {
  local version release staging
  make_dir "$PREFIX/releases" 0755
  staging="$root$PREFIX/releases/.assembling-$$"
  rm -rf "$staging"
  mkdir -m 0755 "$staging"
  version=$(assemble_release "$staging") || { rm -rf "$staging"; exit 1; }
  release="$PREFIX/releases/$version"
  rm -rf "$root$release"
  mv "$staging" "$root$release"
  record tree "$release"
  ln -sfn "releases/$version" "$root$PREFIX/current"
  record link "$PREFIX/current"
  # Self-updates are verified against the public keys here (docs/updates.md); it starts empty.
  make_dir "$ETC/trusted-keys" 0755
  echo "installed release $version in $PREFIX/releases/$version ($PREFIX/current)"
}

do_assemble() {
  [ -d "$assemble_to" ] || mkdir -p "$assemble_to"
  [ -z "$(ls -A "$assemble_to")" ] || { echo "bulwark-install: $assemble_to is not empty" >&2; exit 1; }
  assemble_release "$(cd "$assemble_to" && pwd)" > /dev/null
  echo "assembled the release tree in $assemble_to"
}

# Every unit in install/systemd/ is installed with its paths filled in and enabled through its WantedBy=
# (templates, `name@.service`, are installed and not enabled: their instances are).
install_units() {
  local unit name target wanted
  make_dir "$UNIT_DIR" 0755
  for unit in "$source_dir"/install/systemd/*.service; do
    name=$(basename "$unit")
    sed -e "s|@PREFIX@|$PREFIX|g" -e "s|@ETC@|$ETC|g" -e "s|@NODE@|$node|g" "$unit" > "$root$UNIT_DIR/$name"
    chmod 0644 "$root$UNIT_DIR/$name"
    record file "$UNIT_DIR/$name"
    case $name in *@.service) continue ;; esac
    for target in $(sed -n 's/^WantedBy=//p' "$unit"); do
      make_dir "$UNIT_DIR/$target.wants" 0755
      wanted="$UNIT_DIR/$target.wants/$name"
      ln -sfn "$UNIT_DIR/$name" "$root$wanted"
      record link "$wanted"
    done
  done
}

mask_competing_units() {
  local unit path
  for unit in "${MASKED_UNITS[@]}"; do
    path="$UNIT_DIR/$unit"
    if [ -L "$root$path" ] && [ "$(readlink "$root$path")" = /dev/null ]; then
      grep -Fxq -- "mask $path" "$manifest" || echo "$unit was already masked; left as it is"
      continue
    fi
    if [ -e "$root$path" ] || [ -L "$root$path" ]; then
      echo "bulwark-install: $path exists (a local unit file); $unit is not masked: disable it yourself" >&2
      continue
    fi
    ln -s /dev/null "$root$path"
    record mask "$path"
    if live_systemd; then systemctl stop "$unit" 2>/dev/null || true; fi
  done
}

# The Node.js bulwark.service runs: checked before anything is written.
resolve_node() {
  node=${node_path:-$(command -v node || true)}
  case $node in
    /*) ;;
    *) echo "bulwark-install: no Node.js found (install nodejs 20, or give --node /path/to/node)" >&2; exit 1 ;;
  esac
  case $node in
    *[!A-Za-z0-9._/+-]*) echo "bulwark-install: unusable Node.js path '$node'" >&2; exit 1 ;;
  esac
  [ -x "$root$node" ] || { echo "bulwark-install: $root$node is not executable: bulwark.service could not start" >&2; exit 1; }
}

do_install() {
  resolve_node
  start_manifest
  install_release
  write_env_file
  make_dir "$DATA_DIR" 0700
  chmod 0700 "$root$DATA_DIR"
  make_dir "$RUNTIME_DIR" 0755
  make_dir "$LOG_DIR" 0750
  install_units
  mask_competing_units
  if live_systemd; then
    systemctl daemon-reload
    echo "Start it: systemctl start bulwark-boot.service bulwark.service   (logs: journalctl -u bulwark)"
  elif [ -z "$root" ]; then
    echo "systemd is not PID 1 here: start it as docs/appliance.md says (\"Without systemd\"); logs go to $LOG_DIR/bulwark.log"
  fi
}

do_uninstall() {
  [ -f "$manifest" ] || { echo "bulwark-install: no $ETC/install.manifest in ${root:-/}: nothing installed by this script" >&2; exit 1; }
  if live_systemd; then systemctl stop bulwark.service 2>/dev/null || true; fi
  # Newest first. Without --purge the data directory, the logs and the environment file stay (as dpkg's remove
  # keeps configuration), and so do the lines naming them and their parents: a later purge removes them.
  local lines=() kept=() line kind path i
  mapfile -t lines < "$manifest"
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    line=${lines[i]}
    kind=${line%% *}
    path=${line#* }
    case $path in /*) ;; *) echo "bulwark-install: skipping a manifest line without an absolute path: $line" >&2; continue ;; esac
    if [ "$purge" = no ] && { [ "$path" = "$DATA_DIR" ] || [ "$path" = "$LOG_DIR" ] || [ "$path" = "$ETC/bulwark.env" ]; }; then
      echo "keeping $path (uninstall --purge removes it)"
      kept=("$line" "${kept[@]}")
      continue
    fi
    case $kind in
      file|link|mask) rm -f "$root$path" ;;
      tree) rm -rf "$root$path" ;;
      dir)
        case $path in "$DATA_DIR"|"$LOG_DIR"|"$RUNTIME_DIR") rm -rf "$root$path" ;; esac
        [ "$path" != "$ETC" ] || [ "${#kept[@]}" -gt 0 ] || rm -f "$manifest"
        rmdir "$root$path" 2>/dev/null || [ ! -d "$root$path" ] || kept=("$line" "${kept[@]}")
        ;;
      *) echo "bulwark-install: unknown manifest line: $line" >&2 ;;
    esac
  done
  if [ "${#kept[@]}" -gt 0 ]; then printf '%s\n' "${kept[@]}" > "$manifest"; else rm -f "$manifest"; fi
  if live_systemd; then systemctl daemon-reload; fi
  echo "Bulwark uninstalled from ${root:-/}"
}

case $action in
  install) do_install ;;
  uninstall) do_uninstall ;;
  assemble) do_assemble ;;
esac
