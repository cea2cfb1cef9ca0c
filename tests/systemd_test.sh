#!/usr/bin/env bash
# The systemd files as `cmake --install` puts them: the unit passes `systemd-analyze verify` (which
# also checks that ExecStart's binary is installed where the unit says), and the sysusers.d and
# tmpfiles.d snippets apply cleanly to an empty root directory.
#
# Usage: systemd_test.sh BUILD_DIR [CMAKE]
# Works as root in a container without systemd as PID 1 (systemd-analyze verify needs no manager).
# Fails, rather than skips, when the systemd tools are missing: scripts/setup.sh installs them.
set -uo pipefail

build="${1:?usage: systemd_test.sh BUILD_DIR [CMAKE]}"
cmake="${2:-cmake}"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

for tool in systemd-analyze systemd-sysusers systemd-tmpfiles; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "FAIL: $tool not found; install the systemd package (scripts/setup.sh does)" >&2
    exit 1
  fi
done

tmp="$(mktemp -d /tmp/cuzk_systemd_test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

# 1. A full install into a scratch prefix, as a packager or `sudo cmake --install build` would do.
if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  tail -n 20 "$tmp/install.log" >&2
  echo "FAIL: cmake --install $build --prefix $prefix failed (is everything built?)" >&2
  exit 1
fi

unit="$prefix/lib/systemd/system/cuzk.service"
for f in "$unit" "$prefix/lib/sysusers.d/cuzk.conf" "$prefix/lib/tmpfiles.d/cuzk.conf" \
         "$prefix/share/cuzk/cuzk.example.toml" "$prefix/etc/cuzk/cuzk.toml.example"; do
  if [ -f "$f" ]; then ok "installed ${f#"$prefix"/}"; else fail "not installed: ${f#"$prefix"/}"; fi
done
for b in cuzk cuzk-supervisor cuzk-synth-worker cuzk-gpu-worker; do
  if [ -x "$prefix/bin/$b" ]; then ok "installed bin/$b"; else fail "not installed: bin/$b"; fi
done
[ -f "$unit" ] || exit 1

# 2. The unit points at the installed supervisor and carries the settings the daemon relies on.
exec_start="$(sed -n 's/^ExecStart=//p' "$unit")"
if [ "$exec_start" = "$prefix/bin/cuzk-supervisor --config /etc/cuzk/cuzk.toml" ]; then
  ok "ExecStart=$exec_start"
else
  fail "ExecStart is '$exec_start', expected '$prefix/bin/cuzk-supervisor --config /etc/cuzk/cuzk.toml'"
fi
if grep -q '@[A-Z_]*@' "$unit"; then fail "unsubstituted @VARIABLE@ in the unit: $(grep '@[A-Z_]*@' "$unit")"; fi
for setting in Type=notify NotifyAccess=main WatchdogSec=30 Restart=on-failure RestartPreventExitStatus=78 \
               User=cuzk Group=cuzk RuntimeDirectory=cuzk StateDirectory=cuzk LogsDirectory=cuzk \
               LimitMEMLOCK=infinity KillMode=mixed OOMPolicy=continue; do
  grep -qx "$setting" "$unit" || fail "the unit lacks $setting"
done
sed -n '/^\[Unit\]/,/^\[/p' "$unit" | grep -q '^StartLimitIntervalSec=' || fail "StartLimitIntervalSec is not in [Unit]"
sed -n '/^\[Unit\]/,/^\[/p' "$unit" | grep -q '^StartLimitBurst=' || fail "StartLimitBurst is not in [Unit]"
# The GPU workers need /dev/nvidia*: no private /dev, and a closed device policy must let them in.
grep -q '^PrivateDevices=yes' "$unit" && fail "PrivateDevices=yes hides /dev/nvidia* from the GPU workers"
if grep -Eq '^DevicePolicy=(closed|strict)' "$unit" && ! grep -qx 'DeviceAllow=char-nvidia\* rw' "$unit"; then
  fail "the unit closes the device policy without DeviceAllow=char-nvidia* rw"
fi

# 3. systemd-analyze verify. It exits 0 on some problems (an unknown key is only a warning), so any
#    message about our unit fails the test too. Messages about other units on this host are shown.
out="$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no --recursive-errors=no "$unit" 2>&1)"
rc=$?
if [ -n "$out" ]; then echo "$out" | sed 's/^/  systemd-analyze: /'; fi
if [ $rc -ne 0 ]; then
  fail "systemd-analyze verify exited $rc"
elif echo "$out" | grep -q 'cuzk'; then
  fail "systemd-analyze verify reported problems in cuzk.service"
else
  ok "systemd-analyze verify cuzk.service"
fi

# 3b. verify must notice a broken unit, or the check above proves nothing.
sed 's/^KillMode=mixed$/KillMode=mixed\nNotAKey=1/' "$unit" >"$tmp/cuzk.service"
bad="$(systemd-analyze verify --man=no --recursive-errors=no "$tmp/cuzk.service" 2>&1)"
if echo "$bad" | grep -q "NotAKey"; then ok "systemd-analyze verify flags an unknown key"; else
  fail "systemd-analyze verify did not flag an unknown key (got: $bad)"; fi

# 3c. The sandboxing's exposure score may not get worse than the one recorded in
#     docs/RELIABILITY.md (systemd-analyze security; --offline needs systemd 250 or later).
recorded=1.5
if systemd-analyze security --help 2>&1 | grep -q -- '--offline'; then
  score="$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1 |
           sed -n 's/.*Overall exposure level for cuzk.service: \([0-9.]*\).*/\1/p')"
  if [ -z "$score" ]; then
    fail "systemd-analyze security --offline=true gave no score"
  elif awk -v s="$score" -v r="$recorded" 'BEGIN { exit !(s <= r) }'; then
    ok "systemd-analyze security: exposure $score (recorded $recorded)"
  else
    fail "systemd-analyze security: exposure $score, worse than the recorded $recorded"
  fi
else
  echo "note: systemd-analyze security has no --offline here; the exposure score was not checked"
fi

# 4. sysusers.d: create the user and groups in an empty root directory.
root="$tmp/root"
mkdir -p "$root/etc"
out="$(systemd-sysusers --root="$root" "$prefix/lib/sysusers.d/cuzk.conf" 2>&1)"
rc=$?
echo "$out" | sed 's/^/  systemd-sysusers: /'
if [ $rc -ne 0 ] || echo "$out" | grep -qiE 'cuzk.conf|fail|ignor'; then
  fail "systemd-sysusers exited $rc or complained"
elif ! grep -q '^cuzk:' "$root/etc/passwd" || ! grep -q '^cuzk:' "$root/etc/group"; then
  fail "systemd-sysusers did not create the cuzk user and group"
elif ! grep -Eq '^video:.*[:,]cuzk(,|$)' "$root/etc/group" || ! grep -Eq '^render:.*[:,]cuzk(,|$)' "$root/etc/group"; then
  fail "cuzk is not in the video and render groups: $(grep -E '^(video|render):' "$root/etc/group")"
else
  ok "systemd-sysusers cuzk.conf"
fi

# 5. tmpfiles.d: create the directories in the same root, with the owners sysusers just made.
#    Changing owners needs root; as another user, only a dry parse is possible, so it is skipped.
if [ "$(id -u)" -eq 0 ]; then
  out="$(systemd-tmpfiles --create --root="$root" "$prefix/lib/tmpfiles.d/cuzk.conf" 2>&1)"
  rc=$?
  if [ -n "$out" ]; then echo "$out" | sed 's/^/  systemd-tmpfiles: /'; fi
  uid="$(awk -F: '$1=="cuzk"{print $3}' "$root/etc/passwd")"
  gid="$(awk -F: '$1=="cuzk"{print $3}' "$root/etc/group")"
  if [ $rc -ne 0 ] || [ -n "$out" ]; then
    fail "systemd-tmpfiles exited $rc or complained"
  else
    for spec in "etc/cuzk 750 0 $gid" "var/lib/cuzk 700 $uid $gid" "var/lib/cuzk/keys 750 $uid $gid" \
                "var/log/cuzk 750 $uid $gid"; do
      set -- $spec
      got="$(stat -c '%a %u %g' "$root/$1" 2>/dev/null)"
      if [ "$got" = "$2 $3 $4" ]; then ok "tmpfiles: /$1 $got"; else
        fail "tmpfiles: /$1 is '$got', expected '$2 $3 $4'"; fi
    done
  fi
else
  echo "note: not root, so the tmpfiles.d snippet was not applied"
fi

if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all systemd checks passed"
