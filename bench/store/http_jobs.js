// Single-partition jobs from many clients through the HTTP API of a running daemon: each client
// submits a job (its witness as base64), waits for it (GET ?wait), and submits the next.
//   node bench/store/http_jobs.js SOCKET CIRCUIT WTNS CLIENTS JOBS
// Prints jobs/s and the submission answer's median and 99th percentile.
"use strict";
const http = require("http");
const fs = require("fs");
const [sock, circuit, wtns, clients = "16", jobs = "2000"] = process.argv.slice(2);
const body = JSON.stringify({circuit, witnesses: [{base64: fs.readFileSync(wtns).toString("base64")}]});
const agent = new http.Agent({keepAlive: true, maxSockets: Number(clients) * 2});

function request(method, path, data) {
  return new Promise((resolve, reject) => {
    const req = http.request({socketPath: sock, method, path, agent,
      headers: data ? {"content-type": "application/json", "content-length": Buffer.byteLength(data)} : {}}, res => {
      let b = "";
      res.on("data", d => (b += d));
      res.on("end", () => resolve({status: res.statusCode, body: b}));
    });
    req.on("error", reject);
    if (data) req.write(data);
    req.end();
  });
}

async function main() {
  let left = Number(jobs), failed = 0;
  const submitMs = [];
  const t0 = process.hrtime.bigint();
  async function client() {
    while (left > 0) {
      left--;
      const s = process.hrtime.bigint();
      const r = await request("POST", "/v1/proofs", body);
      submitMs.push(Number(process.hrtime.bigint() - s) / 1e6);
      if (r.status !== 201) { failed++; continue; }
      const id = JSON.parse(r.body).id;
      for (;;) {
        const g = await request("GET", `/v1/proofs/${id}?wait=30`);
        const st = JSON.parse(g.body).state;
        if (st === "done") break;
        if (st !== "queued" && st !== "running") { failed++; break; }
      }
    }
  }
  await Promise.all(Array.from({length: Number(clients)}, client));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  submitMs.sort((a, b) => a - b);
  const q = p => submitMs[Math.min(submitMs.length - 1, Math.floor(p * submitMs.length))].toFixed(2);
  console.log(`${jobs} jobs from ${clients} clients in ${s.toFixed(2)} s: ${(Number(jobs) / s).toFixed(0)} jobs/s;` +
              ` submission answered in ${q(0.5)} ms (median), ${q(0.99)} ms (p99); ${failed} failed`);
  agent.destroy();
}
main().catch(e => { console.error(e); process.exit(1); });
