#!/bin/sh
# Bulwark's boot step: loads the last applied ruleset before any network interface comes up, without Node.
#
#   bulwark-boot.sh [ENV_FILE]      (default /etc/bulwark/bulwark.env, or $BULWARK_ENV_FILE)
#   bulwark-boot.sh --print-builtin-fallback [ENV_FILE]   prints the built-in fallback and loads nothing
#
# Reads BULWARK_DATA_DIR, BULWARK_PLATFORM, BULWARK_LISTEN and BULWARK_TLS_LISTEN from the service's environment file (the same file
# bulwark.service reads), so a non-default data directory works. Loads <data-dir>/boot/ruleset.nft (linux,
# `nft -f`) or <data-dir>/boot/ruleset.pf (freebsd, `pfctl -a bulwark -f`), which Bulwark keeps after every
# successful load. When that file is missing or refused, loads the fallback Bulwark rendered beside it
# (<data-dir>/boot/fallback.*), or, without one, the built-in fallback below: inbound and routed traffic dropped
# except loopback, established connections, neighbour discovery and management (the ports of the API's plain
# and HTTPS listeners, and SSH) from private sources. Records what it did in <data-dir>/boot/last-boot.json, which GET /api/v1/status shows.
# Exit status: 0 when a ruleset (applied or fallback) is loaded, 1 when none could be.
set -u
umask 077

print_builtin=no
if [ "${1:-}" = --print-builtin-fallback ]; then
  print_builtin=yes
  shift
fi
env_file=${1:-${BULWARK_ENV_FILE:-/etc/bulwark/bulwark.env}}
data_dir=/var/lib/bulwark
platform=linux
listen=0.0.0.0:8080
# HTTPS is off unless the environment file turns it on (as for `npm start`; the installer's file has 0.0.0.0:8443).
tls_listen=off

# The environment file is read as KEY=VALUE lines (systemd's EnvironmentFile format), never run as a script.
if [ -r "$env_file" ]; then
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in
      ''|'#'*) continue ;;
    esac
    key=${line%%=*}
    value=${line#*=}
    case $value in
      \"*\") value=${value#\"}; value=${value%\"} ;;
      \'*\') value=${value#\'}; value=${value%\'} ;;
    esac
    case $key in
      BULWARK_DATA_DIR) data_dir=$value ;;
      BULWARK_PLATFORM) platform=$value ;;
      BULWARK_LISTEN) listen=$value ;;
      BULWARK_TLS_LISTEN) tls_listen=$value ;;
    esac
  done < "$env_file"
fi

# A relative data directory is relative to the release, as for bulwark.service (WorkingDirectory=/opt/bulwark/current).
case $data_dir in
  /*) ;;
  *) data_dir=$(cd "$(dirname "$0")/.." && pwd)/$data_dir ;;
esac

case $platform in
  freebsd) ext=pf ;;
  *) ext=nft ;;
esac
boot_dir=$data_dir/boot
ruleset=$boot_dir/ruleset.$ext
fallback=$boot_dir/fallback.$ext
mkdir -p "$boot_dir" 2>/dev/null
# Nothing here may stop a ruleset from loading: without a place for the tool's messages they are not kept.
errors=$(mktemp "$boot_dir/.errors.XXXXXX" 2>/dev/null || mktemp 2>/dev/null) || errors=/dev/null
trap '[ "$errors" = /dev/null ] || rm -f "$errors"' EXIT

# Loads FILE, or standard input with `-`.
load() {
  if [ "$ext" = pf ]; then
    pfctl -a bulwark -f "$1" >/dev/null 2>"$errors"
  else
    nft -f "$1" >/dev/null 2>"$errors"
  fi
}

# The tool's first error line, made safe for a JSON string (no quotes, backslashes or control characters).
first_error() {
  { grep -m1 -i 'error' "$errors" || head -n1 "$errors"; } | tr -d '\000-\037"\\' | cut -c1-300
}
# The line of the loaded file the tool named (`FILE:LINE:…`), or nothing.
error_line() {
  sed -n 's/^[^:]*:\([0-9][0-9]*\):.*/\1/p' "$errors" | head -n1
}

# Text made safe for a JSON string.
json_text() {
  printf '%s' "$1" | tr -d '\000-\037"\\'
}

# Writes last-boot.json atomically: loaded (applied|fallback|none), the file loaded, why.
record() {
  loaded=$1 file=$(json_text "$2") reason=$3 error=$4 line=$5
  tmp="$boot_dir/last-boot.json.tmp-$$"
  {
    printf '{"loaded":"%s","file":"%s","reason":"%s",' "$loaded" "$file" "$reason"
    printf '"ruleset_error":"%s","ruleset_error_line":%s,' "$error" "${line:-null}"
    printf '"at":"%s","platform":"%s"}\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$ext"
  } > "$tmp" && mv -f "$tmp" "$boot_dir/last-boot.json"
  echo "bulwark-boot: $loaded ($reason): $file" >&2
}

# The fallback when Bulwark never rendered one (a fresh install): the same rules as src/compile/boot-fallback.ts
# with no LAN interface known (the install test compares the two).
builtin_fallback() {
  port=${listen##*:}
  case $port in
    ''|*[!0-9]*) port=8080 ;;
  esac
  # The HTTPS listener's port too, unless it is off (`off` or empty, as Bulwark reads it).
  tls_port=
  case $tls_listen in
    ''|off) ;;
    *) tls_port=${tls_listen##*:} ;;
  esac
  case $tls_port in
    *[!0-9]*) tls_port= ;;
  esac
  # SSH, the API port and the HTTPS port: numerically sorted, each once, space-separated.
  ports=$(printf '%s\n' 22 "$port" $tls_port | sort -n -u | tr '\n' ' ')
  ports=${ports% }
  if [ "$ext" = pf ]; then
    cat <<PF
# Bulwark boot fallback for pf anchor "bulwark" (generated; do not edit): loaded when the last applied ruleset is missing or refused.
# Blocks inbound and routed traffic except loopback, established, neighbour discovery and management from LAN.
block in all label "bulwark:fallback-block"
pass quick on lo0 all no state label "bulwark:fallback-loopback"
pass in quick inet6 proto icmp6 icmp6-type { neighbrsol neighbradv routersol routeradv } no state label "bulwark:fallback-nd"
pass in quick proto tcp from { 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 fc00::/7 fe80::/10 } to (self) port { $ports } keep state label "bulwark:fallback-management"
pass out all keep state label "bulwark:fallback-out"
PF
  else
    nft_ports=$(echo "$ports" | sed 's/ /, /g')
    cat <<NFT
#!/usr/sbin/nft -f
# Bulwark boot fallback (generated; do not edit): loaded when the last applied ruleset is missing or refused.
# Drops inbound and routed traffic except loopback, established, neighbour discovery and management from LAN.
table inet bulwark
delete table inet bulwark

table inet bulwark {
	chain filter_in {
		type filter hook prerouting priority dstnat + 10; policy drop;
		iifname "lo" accept comment "fallback: loopback"
		ct state established,related accept comment "fallback: state handling"
		icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit, nd-router-advert } accept comment "fallback: neighbour discovery"
		ip saddr { 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 } fib daddr type local tcp dport { $nft_ports } accept comment "fallback: management from private sources"
		ip6 saddr { fc00::/7, fe80::/10 } fib daddr type local tcp dport { $nft_ports } accept comment "fallback: management from private sources"
	}
}
NFT
  fi
}

if [ "$print_builtin" = yes ]; then
  builtin_fallback
  exit 0
fi

if [ -f "$ruleset" ]; then
  if load "$ruleset"; then
    record applied "$ruleset" applied "" ""
    exit 0
  fi
  reason=refused
  ruleset_error=$(first_error)
  ruleset_line=$(error_line)
else
  reason=missing
  ruleset_error=
  ruleset_line=
fi

# Bulwark's rendered fallback first (it knows the LAN interfaces and the API's ports), the built-in one if that is
# missing or refused too.
if [ -f "$fallback" ] && load "$fallback"; then
  record fallback "$fallback" "$reason" "$ruleset_error" "$ruleset_line"
  exit 0
fi
if builtin_fallback | load -; then
  record fallback builtin "$reason" "$ruleset_error" "$ruleset_line"
  exit 0
fi
record none builtin "$reason" "$ruleset_error" "$ruleset_line"
exit 1
