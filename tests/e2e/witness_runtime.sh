#!/usr/bin/env bash
# Witness generators of different circuits on the same prime link one compile of circom's runtime and
# cuzk's driver and tracer (<cache>/runtime/<key>/): concurrent builds into an empty cache leave one
# complete copy; a later circuit, and `cuzk witness build`, compile only the circuit's own code; a
# runtime source or a compiler that differs is compiled again, never answered from the cache.
# Usage: witness_runtime.sh   (uses the multiplier, no_public and many_public fixtures)
source "$(dirname "$0")/lib.sh"
require_tools
for c in multiplier no_public many_public; do require_case "$c" "$c"; done
d="$(scratch_dir witness_runtime)"
export CUZK_CACHE_DIR="$d/cache"  # empty: this test's alone
runtime="$CUZK_CACHE_DIR/witness/runtime"
gm="$(generator_dir multiplier)" gn="$(generator_dir no_public)" gp="$(generator_dir many_public)"
runtime_compiles='(calcwit|fr|main|driver|tracer)\.cpp|fr\.asm'

# entries N: N runtime folders, and no build's own folder left behind.
entries() {
  local n
  n="$(find "$runtime" -mindepth 1 -maxdepth 1 -type d -name '[0-9a-f]*' | wc -l)"
  [ "$n" -eq "$1" ] || die "expected $1 runtime folders under $runtime, found $n: $(ls -A "$runtime")"
  [ -z "$(find "$runtime" -mindepth 1 -maxdepth 1 -name '.*')" ] || die "a build left its folder: $(ls -A "$runtime")"
}
# calc CASE GENERATOR LOG: a witness byte-identical to snarkjs's, and the witness program traced (by
# the tracer, linked from the runtime objects) and checked against the generator.
calc() {
  expect_rc 0 "$d/$3.log" "$CUZK_BIN" witness calc "$2" "$(case_input "$1")" "$d/$3.wtns"
  cmp "$d/$3.wtns" "$(case_dir "$1")/witness.wtns" || die "$3: the witness of $1 differs from snarkjs's"
  grep -q "^witness program .* operations (of .* traced)" "$d/$3.log" || die "$3: no witness program: $(cat "$d/$3.log")"
}

# Two circuits built at once into the empty cache: both right, one runtime folder.
calc multiplier "$gm" first_m &
pid_m=$!
calc no_public "$gn" first_n &
pid_n=$!
wait "$pid_m" || die "the multiplier's first build failed"
wait "$pid_n" || die "no_public's first build failed"
grep -Eq "$runtime_compiles" "$d/first_m.log" "$d/first_n.log" || die "neither first build compiled the runtime"
entries 1

# A third circuit and an artefact built ahead of time compile only the circuit's own code.
calc many_public "$gp" third
grep -q "many_public.cpp" "$d/third.log" || die "the third circuit was not compiled: $(cat "$d/third.log")"
! grep -Eq "$runtime_compiles" "$d/third.log" || die "the runtime was compiled again: $(cat "$d/third.log")"
grep -qF "circom's runtime and cuzk's driver from $runtime/" "$d/third.log" || die "no reuse reported"
expect_rc 0 "$d/build.log" "$CUZK_BIN" witness build "$gm" "$d/artefact"
! grep -Eq "$runtime_compiles" "$d/build.log" || die "witness build compiled the runtime again: $(cat "$d/build.log")"
calc multiplier "$d/artefact" artefact
entries 1

# Changed runtime sources are compiled: with stale objects this build would succeed.
cp -r "$gm" "$d/changed_cpp"
echo '#error changed runtime source' >>"$d/changed_cpp/calcwit.cpp"
expect_rc 2 "$d/changed.log" "$CUZK_BIN" witness calc "$d/changed_cpp" "$(case_input multiplier)" "$d/changed.wtns"
grep -q "changed runtime source" "$d/changed.log" || die "the changed calcwit.cpp was not compiled: $(cat "$d/changed.log")"
entries 1

# So is the runtime under another compiler (here: one that reports another version and refuses it).
mkdir "$d/tools"
cat >"$d/tools/g++" <<EOF
#!/bin/sh
[ "\$1" = --version ] && { echo "g++ (another build) 1.0"; exit 0; }
case "\$*" in *calcwit.cpp*) echo "calcwit.cpp compiled by the other g++"; exit 1 ;; esac
exec $(command -v g++) "\$@"
EOF
chmod +x "$d/tools/g++"
PATH="$d/tools:$PATH" expect_rc 2 "$d/compiler.log" "$CUZK_BIN" witness calc "$gp" "$(case_input many_public)" "$d/c.wtns"
grep -q "compiled by the other g++" "$d/compiler.log" || die "another compiler reused the runtime: $(cat "$d/compiler.log")"
entries 1
log "PASS witness_runtime"
