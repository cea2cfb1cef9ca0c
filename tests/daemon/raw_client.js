// Raw HTTP over the daemon's unix socket, for what the cuzk client never sends: held idle
// connections, requests byte by byte, bodies larger than they should be. Each command prints one
// JSON object.
//   node raw_client.js hold SOCK N MAX_S    N idle connections; waits until the daemon has closed
//                                           them all (or MAX_S): how many got 503 at once, and when
//                                           the others were closed
//   node raw_client.js send SOCK JSON_TEXT  the bytes of a JSON string, then the answer until close
//   node raw_client.js body SOCK LENGTH MIB [chunked]  headers announcing LENGTH bytes (or chunked),
//                                           then up to MIB MiB of zeros while the daemon reads; the
//                                           status and how much it took
//   node raw_client.js get SOCK PATH        a plain GET: status and body
//   node raw_client.js upload SOCK CIRCUIT WTNS N PAD [cut|hold BYTES]
//                                           POST /v1/proofs with N copies of WTNS as base64 and PAD
//                                           spaces after the JSON: the status and body; with cut,
//                                           only the first BYTES are sent before the client leaves
//                                           ({"cut": true}); with hold, it then waits to be killed
//   node raw_client.js clients SOCK N CIRCUIT WTNS
//                                           N clients at once, each on its own connection: submit a
//                                           job of WTNS (a path), then long-poll it until it is final;
//                                           meanwhile GET /v1/status on a fresh connection every 20 ms.
//                                           Prints how many jobs finished done, the errors, and the
//                                           status latencies (ms) while jobs were unfinished
//   node raw_client.js pipeline SOCK N WAIT_S  N pipelined GET /v1/status, none of the answers read
//                                           for WAIT_S; then how many answers came and whether the
//                                           daemon had closed the connection
"use strict";
const net = require("net");
const [cmd, sock, a, b, c] = process.argv.slice(2);
const status = (t) => (/^HTTP\/1\.1 (\d{3})/.exec(t) || [])[1] | 0;
const done = (o) => { console.log(JSON.stringify(o)); process.exit(0); };

if (cmd === "hold") {
  const n = +a, t0 = Date.now();
  const res = [];
  let left = n;
  for (let i = 0; i < n; i++) {
    const r = { data: "", closed_ms: -1 };
    res.push(r);
    const s = net.connect(sock);
    s.on("data", (d) => (r.data += d));
    s.on("error", () => {});
    s.on("close", () => {
      r.closed_ms = Date.now() - t0;
      if (--left === 0) report();
    });
  }
  const report = () => done({
    refused_503: res.filter((r) => status(r.data) === 503).length,
    refused_fast: res.filter((r) => status(r.data) === 503 && r.closed_ms < 5000).length,
    closed_silently: res.filter((r) => r.closed_ms >= 0 && r.data === "").length,
    still_open: res.filter((r) => r.closed_ms < 0).length,
    last_close_ms: Math.max(...res.map((r) => r.closed_ms)),
    message: (res.find((r) => r.data) || { data: "" }).data.split("\r\n\r\n")[1] || "",
  });
  setTimeout(report, +b * 1000);
} else if (cmd === "send") {
  const s = net.connect(sock);
  let data = "";
  s.on("connect", () => s.write(Buffer.from(JSON.parse(a), "latin1")));
  s.on("data", (d) => (data += d));
  s.on("error", () => {});
  s.on("close", () => done({ status: status(data), body: data.split("\r\n\r\n")[1] || "" }));
  setTimeout(() => done({ status: status(data), body: data.split("\r\n\r\n")[1] || "", timeout: true }), 10000);
} else if (cmd === "body") {
  const chunked = c === "chunked", limit = +b * 1048576, t0 = Date.now();
  const s = net.connect(sock);
  let data = "", sent = 0, ended = false;
  const zeros = Buffer.alloc(1 << 20);
  const chunk = Buffer.concat([Buffer.from("100000\r\n"), zeros, Buffer.from("\r\n")]);
  const finish = () => {
    if (ended) return;
    ended = true;
    done({ status: status(data), sent_mib: Math.round(sent / 1048576), ms: Date.now() - t0,
           body: data.split("\r\n\r\n")[1] || "" });
  };
  const pump = () => {
    while (!ended && sent < limit && !data) {
      sent += zeros.length;
      if (!s.write(chunked ? chunk : zeros)) return s.once("drain", pump);
    }
  };
  s.on("connect", () => {
    s.write("POST /v1/proofs HTTP/1.1\r\nHost: cuzk\r\n" +
            (chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + a + "\r\n") + "\r\n");
    pump();
  });
  s.on("data", (d) => { data += d; });
  s.on("error", () => finish());
  s.on("close", finish);
  setTimeout(finish, 60000);
} else if (cmd === "get") {
  require("http").get({ socketPath: sock, path: a }, (r) => {
    let body = "";
    r.on("data", (d) => (body += d));
    r.on("end", () => done({ status: r.statusCode, body }));
  }).on("error", (e) => done({ status: 0, body: String(e) }));
} else if (cmd === "upload") {
  const [circuit, wtns, n, pad, mode, cut] = process.argv.slice(4);
  const b64 = require("fs").readFileSync(wtns).toString("base64");
  const body = Buffer.from(JSON.stringify({ circuit, witnesses: Array(+n).fill({ base64: b64 }) }) + " ".repeat(+pad));
  const s = net.connect(sock);
  let data = "";
  s.on("connect", () => {
    const head = "POST /v1/proofs HTTP/1.1\r\nHost: cuzk\r\nContent-Length: " + body.length + "\r\n\r\n";
    if (!mode) return s.write(head + body.toString("latin1"), "latin1");
    s.write(head);
    s.write(body.subarray(0, +cut), () => {
      if (mode === "cut") { s.destroy(); done({ cut: true }); }
      else console.log(JSON.stringify({ holding: true }));
    });
  });
  s.on("data", (d) => { data += d; if (/\r\n\r\n[\s\S]*\}$/.test(data)) s.end(); });
  s.on("error", () => {});
  s.on("close", () => { if (mode !== "cut") done({ status: status(data), body: data.split("\r\n\r\n")[1] || "" }); });
} else if (cmd === "clients") {
  const http = require("http");
  const [n, circuit, wtns] = [+a, b, c];
  const t0 = Date.now(), lat = [];
  let finished = 0, done_ok = 0, errors = 0, first_error = "", probe_timeouts = 0;
  const req = (agent, method, path, body) => new Promise((resolve, reject) => {
    const r = http.request({ socketPath: sock, agent, method, path, timeout: 300000,
                             headers: body ? { "Content-Type": "application/json" } : {} }, (res) => {
      let t = "";
      res.on("data", (d) => (t += d));
      res.on("end", () => resolve({ status: res.statusCode, body: t }));
    });
    r.on("error", reject);
    r.on("timeout", () => r.destroy(new Error("timeout")));
    r.end(body);
  });
  const fail = (e) => { errors++; if (!first_error) first_error = String(e); };
  const client = async (i) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const s = await req(agent, "POST", "/v1/proofs", JSON.stringify({ circuit, witnesses: [wtns], request_id: "c" + i + "-" + t0 }));
      if (s.status !== 201) throw new Error("submit: HTTP " + s.status + " " + s.body);
      const id = JSON.parse(s.body).id;
      for (;;) {
        const g = await req(agent, "GET", "/v1/proofs/" + id + "?wait=120");
        if (g.status !== 200) throw new Error("await: HTTP " + g.status + " " + g.body);
        const st = JSON.parse(g.body).state;
        if (st === "done") { done_ok++; break; }
        if (st !== "queued" && st !== "running") throw new Error("job " + id + " " + st);
      }
    } catch (e) { fail(e); }
    agent.destroy();
    finished++;
  };
  const probe = () => {
    if (finished === n) return report();
    const t = process.hrtime.bigint();
    req(false, "GET", "/v1/status").then((r) => {
      if (r.status !== 200) probe_timeouts++;
      else if (finished < n) lat.push(Number(process.hrtime.bigint() - t) / 1e6);
    }, () => probe_timeouts++).finally(() => setTimeout(probe, 20));
  };
  const q = (p) => { const s = [...lat].sort((x, y) => x - y); return s.length ? +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(1) : -1; };
  const report = () => done({ clients: n, done: done_ok, errors, first_error, probes: lat.length, probe_failures: probe_timeouts,
                              p50_ms: q(0.5), p99_ms: q(0.99), max_ms: q(1), seconds: +((Date.now() - t0) / 1000).toFixed(1) });
  for (let i = 0; i < n; i++) client(i);
  setTimeout(probe, 50);
} else if (cmd === "pipeline") {
  const s = net.connect(sock);
  let data = "", closed = false;
  s.pause();
  s.on("connect", () => s.write("GET /v1/status HTTP/1.1\r\nHost: cuzk\r\n\r\n".repeat(+a)));
  s.on("error", () => { closed = true; });
  s.on("end", () => { closed = true; });
  s.on("close", () => { closed = true; });
  setTimeout(() => {
    s.on("data", (d) => (data += d));
    s.resume();
    setTimeout(() => done({ answers: (data.match(/HTTP\/1\.1 200/g) || []).length, closed }), 2000);
  }, +b * 1000);
} else {
  console.error("usage: raw_client.js hold|send|body|get|upload|pipeline SOCK ...");
  process.exit(64);
}
