# Shared by the benchmark scripts; sourced, not run.

# bench_circuit CUZK DIR K: in DIR, a `cuzk gen-circuit K` circuit (circuit.r1cs, witness.wtns, seed 1),
# a development key (`cuzk setup --seed bench`, reproducible) and its vk.json, made once and kept
# (a 2^22 setup takes minutes); the logs of each step beside them.
bench_circuit() {
  local cuzk="$1" d="$2" k="$3"
  mkdir -p "$d"
  [ -f "$d/circuit.zkey" ] && [ -f "$d/witness.wtns" ] && [ -f "$d/vk.json" ] && return 0
  echo "[bench] 2^$k: generating circuit and key (cached in $d)" >&2
  "$cuzk" gen-circuit "$k" "$d/circuit.r1cs" "$d/witness.wtns" --seed 1 >"$d/gen.log" 2>&1
  "$cuzk" setup "$d/circuit.r1cs" "$d/circuit.zkey.tmp" --seed bench >"$d/setup.log" 2>&1
  mv "$d/circuit.zkey.tmp" "$d/circuit.zkey"
  "$cuzk" export vk "$d/circuit.zkey" "$d/vk.json" >"$d/export.log" 2>&1
}
