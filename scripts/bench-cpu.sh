#!/usr/bin/env bash
# CPU benchmark on BN254 (snarkjs "bn128"): cuzk, rapidsnark and snarkjs prove the same zkeys and
# witnesses, side by side in one run, and every proof is checked with `snarkjs groth16 verify`.
#
# Needs: node and the repository's npm tools (`npm ci`: snarkjs, circom2), a built cuzk
# (build/bin/cuzk, or --cuzk), and a rapidsnark `prover` binary built from its source
# (`prover <zkey> <wtns> <proof.json> <public.json>`).
#
# The one command:
#   scripts/bench-cpu.sh --rapidsnark /path/to/rapidsnark/build_prover/src/prover /tmp/bench-cpu
# and, with keys made by snarkjs instead of cuzk, at sizes a snarkjs ceremony reaches in minutes:
#   scripts/bench-cpu.sh --keys snarkjs --sizes 12,14 --rapidsnark /path/to/prover /tmp/bench-cpu
#
# Usage: scripts/bench-cpu.sh [options] <work folder>
#   --rapidsnark PATH   rapidsnark's prover (or RAPIDSNARK_PROVER)
#   --rapidsnark-commit HASH
#                       the commit it was built from (or RAPIDSNARK_COMMIT; by default read with git
#                       from the folder the binary lies in, when that is a rapidsnark checkout)
#   --cuzk PATH         cuzk binary (or CUZK_BIN; default build/bin/cuzk)
#   --sizes LIST        log2 of the domain size, comma-separated (default 16,18,20)
#   --runs N            timed proofs per prover and size (default 3); the table shows the median
#   --keys cuzk|snarkjs how the circuits, keys and witnesses are made (default cuzk):
#                         cuzk:    cuzk gen-circuit --curve bn254, cuzk setup, cuzk export vk
#                         snarkjs: a circom chain circuit (default prime, bn128), a powers-of-tau
#                                  ceremony, snarkjs groth16 setup and zkey contribute, and
#                                  snarkjs wtns calculate. The ceremony's phase-2 preparation is
#                                  the slow step and grows about 4.5x per two powers: on a busy
#                                  two-core machine 4 minutes at 2^12, 18 at 2^14, so well over an
#                                  hour at 2^16 (make it once; later runs reuse it, or see --ptau).
#   --ptau FILE         with --keys snarkjs: a prepared (phase 2) bn128 powers-of-tau file of a
#                       power at least the largest size, used instead of making one
#   --provers LIST      which provers to run (default cuzk,rapidsnark,snarkjs)
#
# Each size's domain is exactly 2^k rows: cuzk gen-circuit's circuit, or with --keys snarkjs a chain
# of 2^k - 2 multiplications with one public output. Key material is cached in the work folder and reused by later runs with the same settings.
# Every prover runs with its own default thread count (all cores). Timed runs are interleaved
# (run 1 of each prover, then run 2, ...) after the zkey and witness are read once into the page
# cache. The Markdown report goes to stdout, progress to stderr.
#
# Exit status: 0 when every proof verified; non-zero, with a message naming the cause, when a tool is
# missing, a step fails, a proof does not verify, or a prover's public signals differ from snarkjs's.
# A cuzk that refuses BN254 keys (exit status 2 and an error that names the curve or field) is
# reported as skipped rather than failed.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
say() { echo "[bench-cpu] $*" >&2; }
die() { echo "[bench-cpu] FAIL: $*" >&2; exit 1; }
usage() { sed -n '/^# Usage:/,/^# Each size/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit "${1:-64}"; }

RAPIDSNARK="${RAPIDSNARK_PROVER:-}"
RAPIDSNARK_COMMIT="${RAPIDSNARK_COMMIT:-}"
RAPIDSNARK_FFIASM=""
CUZK="${CUZK_BIN:-$ROOT/build/bin/cuzk}"
SIZES="16,18,20"
RUNS=3
KEYS=cuzk
PROVERS="cuzk,rapidsnark,snarkjs"
PTAU=""
WORK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rapidsnark) RAPIDSNARK="${2:?--rapidsnark needs a path}"; shift 2 ;;
    --rapidsnark-commit) RAPIDSNARK_COMMIT="${2:?--rapidsnark-commit needs a hash}"; shift 2 ;;
    --cuzk) CUZK="${2:?--cuzk needs a path}"; shift 2 ;;
    --sizes) SIZES="${2:?--sizes needs a list}"; shift 2 ;;
    --runs) RUNS="${2:?--runs needs a number}"; shift 2 ;;
    --keys) KEYS="${2:?--keys needs cuzk or snarkjs}"; shift 2 ;;
    --provers) PROVERS="${2:?--provers needs a list}"; shift 2 ;;
    --ptau) PTAU="${2:?--ptau needs a file}"; shift 2 ;;
    -h|--help) usage 0 ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) [ -z "$WORK" ] || { echo "one work folder only" >&2; usage; }; WORK="$1"; shift ;;
  esac
done
[ -n "$WORK" ] || { echo "no work folder given" >&2; usage; }
case "$KEYS" in cuzk|snarkjs) ;; *) die "--keys must be cuzk or snarkjs, not '$KEYS'" ;; esac
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive integer, not '$RUNS'"
IFS=, read -r -a SIZE_LIST <<<"$SIZES"
for k in "${SIZE_LIST[@]}"; do
  if ! [[ "$k" =~ ^[0-9]+$ ]] || [ "$k" -lt 4 ] || [ "$k" -gt 28 ]; then
    die "size '$k' is not a log2 between 4 and 28"
  fi
done
IFS=, read -r -a PROVER_LIST <<<"$PROVERS"
has_prover() { local p; for p in "${PROVER_LIST[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
for p in "${PROVER_LIST[@]}"; do
  case "$p" in cuzk|rapidsnark|snarkjs) ;; *) die "unknown prover '$p' (cuzk, rapidsnark, snarkjs)" ;; esac
done

# ---- tools ---------------------------------------------------------------------------------------
command -v node >/dev/null 2>&1 || die "node is not installed (scripts/setup.sh installs it)"
SNARKJS="$ROOT/node_modules/.bin/snarkjs"
[ -x "$SNARKJS" ] || die "snarkjs missing: $SNARKJS (run npm ci in $ROOT)"
if has_prover rapidsnark; then
  [ -n "$RAPIDSNARK" ] || die "rapidsnark's prover is not given (--rapidsnark PATH or RAPIDSNARK_PROVER)"
  [ -x "$RAPIDSNARK" ] || die "rapidsnark's prover is not an executable file: $RAPIDSNARK"
  RAPIDSNARK="$(realpath "$RAPIDSNARK")"
  if [ -z "$RAPIDSNARK_COMMIT" ]; then
    RAPIDSNARK_COMMIT="$(git -C "$(dirname "$RAPIDSNARK")" rev-parse HEAD 2>/dev/null || echo "unknown (give --rapidsnark-commit)")"
  fi
  # Its field and curve code (ffiasm) is a submodule with a commit of its own.
  rs_top="$(git -C "$(dirname "$RAPIDSNARK")" rev-parse --show-toplevel 2>/dev/null || true)"
  if [ -n "$rs_top" ] && [ -d "$rs_top/depends/ffiasm" ]; then
    RAPIDSNARK_FFIASM="$(git -C "$rs_top/depends/ffiasm" rev-parse HEAD 2>/dev/null || true)"
  fi
fi
if has_prover cuzk || [ "$KEYS" = cuzk ]; then
  [ -x "$CUZK" ] || die "cuzk binary not found: $CUZK (build it, or give --cuzk PATH)"
  CUZK="$(realpath "$CUZK")"
fi
if [ "$KEYS" = cuzk ] && ! "$CUZK" gen-circuit --help 2>&1 | grep -q -- '--curve'; then
  die "$CUZK cannot make BN254 circuits (its gen-circuit has no --curve); --keys snarkjs makes the keys with snarkjs"
fi
if [ "$KEYS" = snarkjs ]; then
  # A native circom on PATH is much faster on large circuits; circom2 (WebAssembly) is the fallback.
  if [ -n "${CIRCOM:-}" ]; then
    read -r -a CIRCOM_CMD <<<"$CIRCOM"
  elif command -v circom >/dev/null 2>&1; then
    CIRCOM_CMD=(circom)
  elif [ -f "$ROOT/node_modules/circom2/cli.js" ]; then
    CIRCOM_CMD=(node "$ROOT/node_modules/circom2/cli.js")
  else
    die "circom missing: neither circom on PATH nor $ROOT/node_modules/circom2 (run npm ci in $ROOT)"
  fi
fi

if [ -n "$PTAU" ]; then
  [ "$KEYS" = snarkjs ] || die "--ptau goes with --keys snarkjs"
  [ -f "$PTAU" ] || die "powers-of-tau file not found: $PTAU"
  PTAU="$(realpath "$PTAU")"
fi

mkdir -p "$WORK"
WORK="$(realpath "$WORK")"

now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# Runs a chatty step with its output in a log file; on failure names the step and shows the log.
STEP_TIMES="$WORK/key-steps.$$.tsv"
: >"$STEP_TIMES"
trap 'rm -f "$STEP_TIMES"' EXIT
step() {
  local label="$1" logfile="$2"; shift 2
  local t0 t1
  say "$label"
  t0=$(now_ns)
  if ! "$@" >"$logfile" 2>&1; then
    tail -n 30 "$logfile" >&2
    die "$label failed: $* (log: $logfile)"
  fi
  t1=$(now_ns)
  printf '%s\t%s\n' "$label" "$(secs "$t0" "$t1")" >>"$STEP_TIMES"
}

snarkjs_version() { node -e 'process.stdout.write(require(process.argv[1]).version)' "$ROOT/node_modules/snarkjs/package.json"; }

max_k=0
for k in "${SIZE_LIST[@]}"; do [ "$k" -gt "$max_k" ] && max_k=$k; done

# ---- key material: snarkjs ----------------------------------------------------------------------
# One ceremony at the largest power serves every size (phase 2 keeps the Lagrange bases of all
# smaller powers). A ceremony of a larger power from an earlier run is reused.
ptau_file() {
  local p f
  [ -n "$PTAU" ] && { echo "$PTAU"; return; }
  for p in $(seq "$max_k" 28); do
    f="$WORK/snarkjs/ptau/pot${p}_final.ptau"
    [ -f "$f" ] && { echo "$f"; return; }
  done
  echo "$WORK/snarkjs/ptau/pot${max_k}_final.ptau"
}

make_ptau() {
  local dir="$WORK/snarkjs/ptau" out
  out="$(ptau_file)"
  if [ -f "$out" ]; then
    say "reusing $out"
    return
  fi
  mkdir -p "$dir"
  step "ptau 2^$max_k: powersoftau new" "$dir/new.log" \
    "$SNARKJS" powersoftau new bn128 "$max_k" "$dir/pot_0000.ptau"
  step "ptau 2^$max_k: powersoftau contribute" "$dir/contribute.log" \
    "$SNARKJS" powersoftau contribute "$dir/pot_0000.ptau" "$dir/pot_0001.ptau" \
    --name="bench-cpu" -e="bench-cpu entropy, not a real ceremony"
  step "ptau 2^$max_k: powersoftau prepare phase2" "$dir/prepare.log" \
    "$SNARKJS" powersoftau prepare phase2 "$dir/pot_0001.ptau" "$out.tmp"
  mv "$out.tmp" "$out"
  rm -f "$dir/pot_0000.ptau" "$dir/pot_0001.ptau"
}

# A folder of key material is reused when its .stamp holds the same settings; otherwise it is emptied
# and the caller makes it again (and then writes the stamp).
reusable() {
  if [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; then
    say "reusing the key material in $1"
    return 0
  fi
  rm -rf "$1"
  mkdir -p "$1"
  return 1
}

# r1cs header fields through snarkjs (it reads the header only).
r1cs_field() { grep -E "$2" "$1" | sed 's/\x1b\[[0-9;]*m//g' | grep -oE '[0-9]+$' | head -n 1; }

make_keys_snarkjs() {
  local k="$1"
  local dir="$WORK/snarkjs/k$k" n ptau stamp
  n=$(( (1 << k) - 2 ))
  ptau="$(ptau_file)"
  stamp="snarkjs-keys v1 k=$k snarkjs=$(snarkjs_version) ptau=$(basename "$ptau")"
  reusable "$dir" "$stamp" && return
  cat >"$dir/chain.circom" <<EOF
pragma circom 2.0.0;

// y = x^(n+1): n multiplications, one constraint each, and one public output.
template Chain(n) {
    signal input x;
    signal output y;
    signal p[n];
    p[0] <== x * x;
    for (var i = 1; i < n; i++) {
        p[i] <== p[i - 1] * x;
    }
    y <== p[n - 1];
}

component main = Chain($n);
EOF
  # circom2 sees only paths relative to its working folder: compile from the circuit's folder.
  (cd "$dir" && step "2^$k: circom (bn128, $n constraints)" "$dir/circom.log" \
    "${CIRCOM_CMD[@]}" chain.circom --O2 --r1cs --wasm -o .)
  mv "$dir/chain.r1cs" "$dir/circuit.r1cs"
  mv "$dir/chain_js/chain.wasm" "$dir/circuit.wasm"
  "$SNARKJS" r1cs info "$dir/circuit.r1cs" >"$dir/r1cs-info.log" 2>&1 || die "snarkjs r1cs info failed on $dir/circuit.r1cs"
  grep -qi 'bn-128\|bn128' "$dir/r1cs-info.log" || die "$dir/circuit.r1cs is not a bn128 circuit (see $dir/r1cs-info.log)"
  local got
  got="$(r1cs_field "$dir/r1cs-info.log" 'Constraints')"
  [ "$got" = "$n" ] || die "circom made $got constraints for 2^$k, expected $n"
  step "2^$k: groth16 setup" "$dir/setup.log" \
    "$SNARKJS" groth16 setup "$dir/circuit.r1cs" "$ptau" "$dir/circuit_0000.zkey"
  step "2^$k: zkey contribute" "$dir/contribute.log" \
    "$SNARKJS" zkey contribute "$dir/circuit_0000.zkey" "$dir/circuit.zkey" \
    --name="bench-cpu" -e="bench-cpu phase-2 entropy 2^$k"
  rm -f "$dir/circuit_0000.zkey"
  step "2^$k: export verificationkey" "$dir/vk.log" \
    "$SNARKJS" zkey export verificationkey "$dir/circuit.zkey" "$dir/vk.json"
  echo '{"x": "7059761328153473957049618093581923604312208846120735108521318089112395107"}' >"$dir/input.json"
  step "2^$k: wtns calculate" "$dir/wtns.log" \
    "$SNARKJS" wtns calculate "$dir/circuit.wasm" "$dir/input.json" "$dir/witness.wtns"
  printf '%s' "$stamp" >"$dir/.stamp"
}

# ---- key material: cuzk -------------------------------------------------------------------------
make_keys_cuzk() {
  local k="$1"
  local dir="$WORK/cuzk/k$k" stamp
  stamp="cuzk-keys v1 k=$k cuzk=$(sha256sum "$CUZK" | cut -c1-16)"
  reusable "$dir" "$stamp" && return
  step "2^$k: cuzk gen-circuit --curve bn254" "$dir/gen.log" \
    "$CUZK" gen-circuit --curve bn254 "$k" "$dir/circuit.r1cs" "$dir/witness.wtns"
  step "2^$k: cuzk setup" "$dir/setup.log" "$CUZK" setup "$dir/circuit.r1cs" "$dir/circuit.zkey"
  step "2^$k: cuzk export vk" "$dir/vk.log" "$CUZK" export vk "$dir/circuit.zkey" "$dir/vk.json"
  printf '%s' "$stamp" >"$dir/.stamp"
}

[ "$KEYS" = snarkjs ] && make_ptau
for k in "${SIZE_LIST[@]}"; do
  if [ "$KEYS" = snarkjs ]; then make_keys_snarkjs "$k"; else make_keys_cuzk "$k"; fi
done

# ---- proving ------------------------------------------------------------------------------------
prove_cmd() {  # prover zkey wtns proof public: sets CMD
  case "$1" in
    cuzk) CMD=("$CUZK" prove "$2" "$3" "$4" "$5") ;;
    rapidsnark) CMD=("$RAPIDSNARK" "$2" "$3" "$4" "$5") ;;
    snarkjs) CMD=("$SNARKJS" groth16 prove "$2" "$3" "$4" "$5") ;;
  esac
}

# Other work on the machine skews the times: the report shows the load when proving began.
LOAD_AT_START="$(cut -d' ' -f1-3 /proc/loadavg)"
declare -A TIMES SKIPPED
for k in "${SIZE_LIST[@]}"; do
  dir="$WORK/$KEYS/k$k"
  out="$dir/proofs"
  rm -rf "$out"
  mkdir -p "$out"
  cat "$dir/circuit.zkey" "$dir/witness.wtns" >/dev/null  # into the page cache before timing
  for r in $(seq 1 "$RUNS"); do
    for p in "${PROVER_LIST[@]}"; do
      [ -n "${SKIPPED[$p,$k]:-}" ] && continue
      proof="$out/$p-$r.proof.json"
      pub="$out/$p-$r.public.json"
      log="$out/$p-$r.log"
      prove_cmd "$p" "$dir/circuit.zkey" "$dir/witness.wtns" "$proof" "$pub"
      t0=$(now_ns)
      rc=0
      "${CMD[@]}" >"$log" 2>&1 || rc=$?
      t1=$(now_ns)
      if [ "$rc" -ne 0 ]; then
        # A cuzk without BN254 refuses the key as bad input and names the curve or field.
        if [ "$p" = cuzk ] && [ "$r" -eq 1 ] && [ "$rc" -eq 2 ] &&
           grep -qiE 'curve|field|prime|bn254|bn128|bls12' "$log"; then
          SKIPPED[$p,$k]="$(grep -m1 -iE 'error' "$log" || tail -n 1 "$log")"
          say "2^$k: cuzk skipped: cuzk prove refuses this BN254 zkey: ${SKIPPED[$p,$k]}"
          continue
        fi
        tail -n 20 "$log" >&2
        die "2^$k: $p failed (exit $rc): ${CMD[*]} (log: $log)"
      fi
      TIMES[$p,$k]="${TIMES[$p,$k]:-} $(secs "$t0" "$t1")"
      say "2^$k: $p run $r/$RUNS: $(secs "$t0" "$t1") s"
    done
  done
  # Every proof must verify, and every prover's public signals must equal those of the reference
  # (snarkjs's first proof when snarkjs ran, else the first prover that did).
  ref=""
  for p in snarkjs rapidsnark cuzk; do
    [ -f "$out/$p-1.public.json" ] && { ref="$out/$p-1.public.json"; break; }
  done
  for p in "${PROVER_LIST[@]}"; do
    [ -n "${SKIPPED[$p,$k]:-}" ] && continue
    for r in $(seq 1 "$RUNS"); do
      proof="$out/$p-$r.proof.json"
      pub="$out/$p-$r.public.json"
      if ! "$SNARKJS" groth16 verify "$dir/vk.json" "$pub" "$proof" >"$out/$p-$r.verify.log" 2>&1 ||
         ! grep -q 'OK' "$out/$p-$r.verify.log"; then
        tail -n 5 "$out/$p-$r.verify.log" >&2
        die "2^$k: the proof by $p (run $r) does NOT verify: $proof"
      fi
      node -e '
        const fs = require("fs");
        const a = JSON.parse(fs.readFileSync(process.argv[1])), b = JSON.parse(fs.readFileSync(process.argv[2]));
        process.exit(JSON.stringify(a) === JSON.stringify(b) ? 0 : 1);' "$pub" "$ref" ||
        die "2^$k: the public signals of $p (run $r) differ from $ref: $pub"
    done
    say "2^$k: $p: $RUNS proofs verified by snarkjs"
  done
done

# ---- report -------------------------------------------------------------------------------------
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) exit 1; m = int((NR + 1) / 2); printf "%.3f", (NR % 2) ? v[m] : (v[m] + v[m + 1]) / 2 }'; }

cpu_model="$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)"
[ -n "$cpu_model" ] || cpu_model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
cuzk_rev="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] || cuzk_rev="$cuzk_rev (modified)"

echo "## CPU Groth16 proving, BN254"
echo
echo "- machine: $(nproc) CPUs available ($(getconf _NPROCESSORS_ONLN) online), $cpu_model, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory, load average $LOAD_AT_START when proving began"
echo "- cuzk: $cuzk_rev$(has_prover cuzk && echo " ($CUZK)" || echo " (not run)")"
if has_prover rapidsnark; then
  echo "- rapidsnark: commit $RAPIDSNARK_COMMIT${RAPIDSNARK_FFIASM:+, ffiasm $RAPIDSNARK_FFIASM} ($RAPIDSNARK)"
else
  echo "- rapidsnark: not run"
fi
echo "- snarkjs $(snarkjs_version), node $(node --version)"
echo "- keys and witnesses: $KEYS; each size's circuit has a domain of exactly 2^k rows"
echo "- median wall time of $RUNS runs per prover, in seconds, every prover on its default thread count"
echo
header="| domain |"
rule="|---|"
for p in "${PROVER_LIST[@]}"; do header="$header $p (s) |"; rule="$rule---:|"; done
if has_prover cuzk && has_prover rapidsnark; then header="$header cuzk vs rapidsnark |"; rule="$rule---:|"; fi
echo "$header"
echo "$rule"
for k in "${SIZE_LIST[@]}"; do
  row="| 2^$k |"
  declare -A MED=()
  for p in "${PROVER_LIST[@]}"; do
    if [ -n "${SKIPPED[$p,$k]:-}" ]; then
      row="$row skipped |"
    else
      MED[$p]="$(echo "${TIMES[$p,$k]}" | median)"
      row="$row ${MED[$p]} |"
    fi
  done
  if has_prover cuzk && has_prover rapidsnark; then
    if [ -n "${MED[cuzk]:-}" ] && [ -n "${MED[rapidsnark]:-}" ]; then
      row="$row $(awk -v c="${MED[cuzk]}" -v r="${MED[rapidsnark]}" 'BEGIN { printf "%.2fx", r / c }') |"
    else
      row="$row - |"
    fi
  fi
  echo "$row"
  unset MED
done
for k in "${SIZE_LIST[@]}"; do
  [ -n "${SKIPPED[cuzk,$k]:-}" ] && { echo; echo "cuzk skipped: its prove refuses BN254 zkeys (${SKIPPED[cuzk,$k]})."; break; }
done
if [ -s "$STEP_TIMES" ]; then
  echo
  echo "Key material made in this run:"
  echo
  echo "| step | seconds |"
  echo "|---|---:|"
  while IFS=$'\t' read -r label s; do echo "| $label | $s |"; done <"$STEP_TIMES"
fi
echo
echo "Every proof above was verified with snarkjs groth16 verify."
