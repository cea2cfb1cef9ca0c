#!/usr/bin/env bash
# kill -9 of the process that compiles a witness generator, midway: the supervisor while a circuit
# is added (the compile runs on its thread pool), and `cuzk witness build` of circom's C++ and of a
# .wasm. No compiler it started outlives it, and the next start (or build) removes the folders it
# was filling. The compilers here are a stand-in g++ and gcc first in PATH that never finish and
# start a child of their own, as the real drivers start the compiler proper.
source "$(dirname "$0")/lib.sh"
require_tools
G_SRC="$CIRC/multiplier/multiplier_cpp"
[ -d "$G_SRC" ] || die "the circuit fixtures lack circom's --c output"
CC="$WORK/slowcc"
mkdir -p "$CC"
for tool in g++ gcc; do
  real="$(command -v $tool)" || { log "skipped: no $tool"; exit $SKIP; }
  cat >"$CC/$tool" <<SH
#!/bin/sh
[ "\$1" = --hold ] && while :; do sleep 1; done
case " \$* " in *" --version "*) exec "$real" "\$@" ;; esac
[ -n "\${CC_FAIL:-}" ] && exit 1
"\$0" --hold &
wait
SH
  chmod +x "$CC/$tool"
done
# The stand-in compilers alive now (a zombie's cmdline is empty; the pattern does not match itself).
compilers() { grep -ls -- "$WORK/slowc[c]/g" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 || true; }
n_compilers() { compilers | wc -l; }
trap 'rc=$?; set +e; for p in $(compilers); do kill -9 "$p" 2>/dev/null || true; done; (exit $rc); cleanup' EXIT
# Folders and locks that builds left under $1.
leftovers() { find "$1" -name '.*.tmp[0-9]*' 2>/dev/null; }

# kill9_mid_compile PID WHAT: once the stand-in compiler and its child run, kill -9 PID; then no
# compiler survives it.
kill9_mid_compile() {
  wait_until 30 "$2 to start compiling" "[ \$(n_compilers) -ge 2 ]"
  log "kill -9 $2 ($1) with $(n_compilers) compiler processes running"
  kill -9 "$1"
  wait "$1" 2>/dev/null || true
  wait_until 5 "the compilers of $2 to die with it" "[ \$(n_compilers) -eq 0 ]"
}

# The supervisor, while a circuit with a generator is added.
KEYS="$WORK/keys"
mkdir -p "$KEYS"
cp "$CIRC/multiplier/circuit.zkey" "$KEYS/mult.zkey"
cp -r "$G_SRC" "$KEYS/"
PORT=$((20000 + $$ % 20000)) ADMIN="compile-admin-$$" TOKEN="compile-client-$$"
write_config 1 1
sed -i "/^\[daemon\]/a key_dirs = [\"$KEYS\"]\ntcp = \"127.0.0.1:$PORT\"\ntoken = \"$TOKEN\"\nadmin_token = \"$ADMIN\"" "$CONFIG"
PATH="$CC:$PATH" start_daemon
pids=$(jstat "s.workers.map(w=>w.pid).join(' ')")
"$CUZK_BIN" circuit add --tcp "127.0.0.1:$PORT" --token "$ADMIN" --name mult_in --zkey "$KEYS/mult.zkey" \
  --witness-generator "$KEYS/multiplier_cpp" >"$WORK/add.out" 2>&1 &
kill9_mid_compile "$SUP_PID" "the supervisor"
SUP_PID=""
wait || true
for p in $pids; do wait_until 10 "worker $p to die with the supervisor" "! kill -0 $p 2>/dev/null"; done
[ -n "$(leftovers "$WORK/state/witness")" ] || die "the killed compile left no scratch folder: nothing to check"
start_daemon
[ -z "$(leftovers "$WORK/state/witness")" ] || die "the next start left: $(leftovers "$WORK/state/witness")"
stop_daemon
log "the supervisor killed while compiling: no compiler left, its folders removed at the next start"

# `cuzk witness build`, and the next build.
export CUZK_CACHE_DIR="$WORK/cache"
PATH="$CC:$PATH" "$CUZK_BIN" witness build "$G_SRC" "$WORK/artefact" >"$WORK/build.out" 2>&1 &
kill9_mid_compile $! "cuzk witness build"
[ -n "$(leftovers "$WORK")" ] || die "the killed build left no scratch folder: nothing to check"
rc=0
CC_FAIL=1 PATH="$CC:$PATH" "$CUZK_BIN" witness build "$G_SRC" "$WORK/artefact" >"$WORK/build.out" 2>&1 || rc=$?
[ "$rc" -ne 0 ] || die "a build whose compiler fails succeeded"
[ -z "$(leftovers "$WORK")" ] || die "the next build left: $(leftovers "$WORK")"
log "cuzk witness build killed while compiling: no compiler left, its folders removed by the next build"

# The same of a .wasm: wasm2c, then gcc on its C, under the same keepers.
if command -v wasm2c >/dev/null 2>&1; then
  PATH="$CC:$PATH" "$CUZK_BIN" witness build "$CIRC/multiplier/circuit.wasm" "$WORK/wasm_artefact" \
    >"$WORK/build_wasm.out" 2>&1 &
  kill9_mid_compile $! "cuzk witness build of a .wasm"
  [ -n "$(leftovers "$WORK")" ] || die "the killed .wasm build left no scratch folder: nothing to check"
  rc=0
  CC_FAIL=1 PATH="$CC:$PATH" "$CUZK_BIN" witness build "$CIRC/multiplier/circuit.wasm" "$WORK/wasm_artefact" \
    >"$WORK/build_wasm.out" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || die "a .wasm build whose compiler fails succeeded"
  [ -z "$(leftovers "$WORK")" ] || die "the next .wasm build left: $(leftovers "$WORK")"
  log "cuzk witness build of a .wasm killed while compiling: no compiler left, its folders removed by the next build"
else
  [ -z "${CI:-}" ] || die "no wasm2c (wabt)"
  log "no wasm2c (wabt): the .wasm build's part skipped"
fi
log "ok"
