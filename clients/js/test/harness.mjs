// Runs the client's tests against real daemons on the cpu backend, with the e2e fixtures'
// multiplier circuit (its snarkjs zkey, vkey and wasm, and circom's C++ output):
//  - builds the circuit's witness generator once with `cuzk witness build`, and a copy of it that
//    segfaults (a job that fails), so that neither daemon compiles anything at start;
//  - starts two cuzk-supervisors: "fast", on a unix socket and on TCP with a token, and "slow",
//    whose proofs take seconds (CUZK_TEST_PROVE_DELAY_MS), for cancel and timeouts;
//  - runs `node --test` on test/*.test.mjs, the daemons' addresses in CUZK_JS_TEST (JSON);
//  - stops the daemons, and keeps the work folder only when something failed.
// ctest passes CUZK_SRC, CUZK_BIN (cuzk), SUP_BIN (cuzk-supervisor) and E2E_WORK, as it does to
// tests/daemon/. Exit 77 (skipped) without snarkjs, unless CI is set.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const log = (...a) => console.log("[clients.js]", ...a);
// Fails the run: before the daemons start, at once; after, through the cleanup below.
const die = (msg) => {
  console.error(`[clients.js] FAIL: ${msg}`);
  if (!daemons) process.exit(1);
  process.exitCode = 1;
  throw new Error(msg);
};
let daemons;

const env = (k) => process.env[k] || die(`${k} is not set (run through ctest: ctest -R clients.js)`);
const SRC = env("CUZK_SRC"), CUZK = env("CUZK_BIN"), SUP = env("SUP_BIN"), E2E = env("E2E_WORK");
if (!fs.existsSync(path.join(SRC, "node_modules/snarkjs/package.json"))) {
  if (process.env.CI) die("snarkjs missing (npm ci)");
  log("skipped: no snarkjs in", path.join(SRC, "node_modules"));
  process.exit(77);
}
const CIRC = path.join(E2E, "circuits/multiplier");
for (const f of ["circuit.zkey", "vk.json", "circuit.wasm", "multiplier.sym", "multiplier_cpp/multiplier.cpp"])
  if (!fs.existsSync(path.join(CIRC, f))) die(`e2e fixture missing: ${path.join(CIRC, f)}`);

// A short path: unix socket paths are limited to 107 bytes.
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), "cuzk-js."));
const TOKEN = `js-client-token-${process.pid}`;
daemons = [];

// Runs a command to its end; rejects with its output when it fails.
function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("error", reject);
    p.on("close", (rc) => (rc === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} exited ${rc}:\n${out}`))));
  });
}

async function buildGenerators() {
  // The crashing copy, patched as tests/daemon/inputs.sh does: a null write when the main template runs.
  const crashSrc = path.join(WORK, "crash");
  fs.mkdirSync(crashSrc);
  fs.cpSync(path.join(CIRC, "multiplier_cpp"), path.join(crashSrc, "multiplier_cpp"), { recursive: true });
  fs.copyFileSync(path.join(CIRC, "multiplier.sym"), path.join(crashSrc, "multiplier.sym"));
  const cpp = path.join(crashSrc, "multiplier_cpp/multiplier.cpp");
  const head = "void Multiplier_0_run(uint ctx_index,Circom_CalcWit* ctx){\n";
  const code = fs.readFileSync(cpp, "utf8");
  if (!code.includes(head)) die(`cannot patch ${cpp}: no '${head.trim()}'`);
  fs.writeFileSync(cpp, code.replace(head, head + "{ volatile int* p = nullptr; *p = 1; }\n"));
  const t0 = Date.now();
  await Promise.all([
    run(CUZK, ["witness", "build", path.join(CIRC, "multiplier_cpp"), path.join(WORK, "gen/mult")]),
    run(CUZK, ["witness", "build", path.join(crashSrc, "multiplier_cpp"), path.join(WORK, "gen/crash")]),
  ]);
  log(`witness generators built in ${Date.now() - t0} ms`);
}

// A free TCP port on loopback (the daemon binds it a moment later).
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

function writeConfig(name, extraDaemon, circuits) {
  const dir = path.join(WORK, name);
  fs.mkdirSync(dir);
  const config = path.join(dir, "cuzk.toml");
  fs.writeFileSync(config, `[daemon]
instance = "js${process.pid}${name[0]}"
state_dir = "${dir}/state"
socket = "${dir}/cuzk.sock"
heartbeat_interval_ms = 200
heartbeat_timeout_ms = 5000
shutdown_grace_ms = 3000
${extraDaemon}
[synthesis]
workers = 1
[gpu]
backend = "cpu"
devices = [0]
slots = 2
threads = 1
${circuits}
[limits]
restart_backoff_initial_ms = 300
restart_backoff_max_ms = 2000
restart_intensity = 10
restart_period_s = 60
`);
  return { name, dir, config, socket: path.join(dir, "cuzk.sock"), instance: `js${process.pid}${name[0]}` };
}

const circuit = (name, generator) => `[[circuits]]
name = "${name}"
zkey = "${CIRC}/circuit.zkey"
${generator ? `witness_generator = "${generator}"` : ""}
`;

function getStatus(socket) {
  return new Promise((resolve) => {
    http.get({ socketPath: socket, path: "/v1/status", agent: false }, (r) => {
      let b = "";
      r.on("data", (d) => (b += d));
      r.on("end", () => { try { resolve(JSON.parse(b)); } catch { resolve(null); } });
    }).on("error", () => resolve(null));
  });
}

// Starts a supervisor and resolves once every worker is idle: its keys are loaded.
async function start(d, extraEnv = {}) {
  const out = fs.openSync(path.join(d.dir, "sup.log"), "a");
  d.proc = spawn(SUP, ["--config", d.config], { stdio: ["ignore", out, out], env: { ...process.env, ...extraEnv } });
  d.exited = new Promise((resolve) => d.proc.on("exit", (code, signal) => resolve({ code, signal })));
  d.proc.on("exit", () => (d.proc = null));
  daemons.push(d);
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    if (!d.proc) die(`the ${d.name} daemon exited at start:\n${tail(d)}`);
    const s = await getStatus(d.socket);
    if (s && s.workers?.length && s.workers.every((w) => w.state === "idle")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  die(`the ${d.name} daemon's workers were not idle within 60 s:\n${tail(d)}`);
}

const tail = (d) => {
  try {
    return fs.readFileSync(path.join(d.dir, "sup.log"), "utf8").split("\n").slice(-40).join("\n");
  } catch {
    return "(no log)";
  }
};

// SIGTERM, then SIGKILL if the supervisor has not drained in 10 s. Workers die with it
// (PR_SET_PDEATHSIG); what a killed one leaves in /dev/shm is removed by its instance name.
async function stop(d) {
  if (d.proc) {
    d.proc.kill("SIGTERM");
    const t = setTimeout(() => d.proc?.kill("SIGKILL"), 10_000);
    const { code, signal } = await d.exited;
    clearTimeout(t);
    if (code !== 0) log(`the ${d.name} daemon exited ${code ?? signal} after SIGTERM`);
  }
  for (const f of fs.readdirSync("/dev/shm").filter((f) => f.startsWith(`cuzk.${d.instance}.`)))
    fs.rmSync(path.join("/dev/shm", f), { force: true });
}

function killAll() {
  for (const d of daemons) d.proc?.kill("SIGKILL");
}
process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { killAll(); process.exit(1); });

let failed = true;
try {
  const t0 = Date.now();
  await buildGenerators();
  const port = await freePort();
  const fast = writeConfig("fast", `tcp = "127.0.0.1:${port}"\ntoken = "${TOKEN}"`,
    circuit("mult", path.join(WORK, "gen/mult")) + circuit("mult_crash", path.join(WORK, "gen/crash")) +
    circuit("mult_wtns"));
  const slow = writeConfig("slow", "", circuit("mult", path.join(WORK, "gen/mult")));
  await Promise.all([start(fast), start(slow, { CUZK_TEST_PROVE_DELAY_MS: "4000" })]);
  log(`daemons up in ${Date.now() - t0} ms`);

  const config = {
    fast: { socket: fast.socket, url: `http://127.0.0.1:${port}`, token: TOKEN },
    slow: { socket: slow.socket },
    circuit: "mult", crashCircuit: "mult_crash", witnessCircuit: "mult_wtns",
    zkey: path.join(CIRC, "circuit.zkey"), wasm: path.join(CIRC, "circuit.wasm"), vkey: path.join(CIRC, "vk.json"),
    src: SRC,
  };
  const files = fs.readdirSync(here).filter((f) => f.endsWith(".test.mjs")).sort().map((f) => path.join(here, f));
  const rc = await new Promise((resolve) => {
    const p = spawn(process.execPath, ["--test", "--test-reporter=spec", ...files],
                    { stdio: "inherit", env: { ...process.env, CUZK_JS_TEST: JSON.stringify(config) } });
    p.on("close", (code) => resolve(code));
  });
  if (rc !== 0) {
    for (const d of daemons) console.error(`--- ${d.name} supervisor log (last 40 lines)\n${tail(d)}`);
    die(`node --test exited ${rc}`);
  }
  failed = false;
  log(`PASS in ${Date.now() - t0} ms`);
} catch (e) {
  if (!process.exitCode) console.error(e);
  process.exitCode = 1;
} finally {
  for (const d of daemons) await stop(d);
  if (failed || process.env.KEEP_WORK) console.error(`[clients.js] work folder kept: ${WORK}`);
  else fs.rmSync(WORK, { recursive: true, force: true });
}
