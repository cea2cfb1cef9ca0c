// snarkjs's witness calculator (circom_runtime, which `snarkjs wtns calculate` runs) timed in process
// on one input: the module compiled once, then `runs` witnesses; prints the median in ms.
// Usage: node bench/wtns_calc_time.cjs <circuit.wasm> <input.json> [runs]
const fs = require("fs");
const path = require("path");
const { WitnessCalculatorBuilder } = require(path.join(__dirname, "..", "node_modules", "circom_runtime"));

(async () => {
  const [wasm, inputFile, runsArg] = process.argv.slice(2);
  const runs = Number(runsArg || 5);
  const wc = await WitnessCalculatorBuilder(fs.readFileSync(wasm));
  const input = JSON.parse(fs.readFileSync(inputFile, "utf8"));
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await wc.calculateWTNSBin(input);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  console.log(ms[Math.floor(ms.length / 2)].toFixed(1));
})();
