// Answers no daemon should give, from a fake HTTP server: every one is a CuzkError, none hangs the
// client, and none is buffered past the client's bound. This file needs no daemon of the harness.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, mock, test } from "node:test";
import { connect, CuzkError } from "../index.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cuzk-js-fake."));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
let servers = 0;

// A fake daemon on a unix socket of its own, answering every request with handler(req, res).
// Resolves to {socket, server}; the server is closed after the file's tests.
async function fake(handler) {
  const socket = path.join(dir, `fake${servers++}.sock`);
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(socket, resolve));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { socket, server };
}

const answering = (status, body, headers = {}) => (_req, res) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(body);
};

// Resolves to the error p rejects with, asserting that it is a CuzkError with the fields of want.
async function rejects(p, want) {
  const e = await p.then(() => assert.fail("resolved; expected a CuzkError"), (e) => e);
  assert.ok(e instanceof CuzkError, `not a CuzkError: ${e?.stack ?? e}`);
  for (const [k, v] of Object.entries(want)) {
    if (v instanceof RegExp) assert.match(String(e[k]), v, `${k} of '${e.message}'`);
    else assert.equal(e[k], v, `${k} of '${e.message}'`);
  }
  return e;
}

// Every call of the client, against one daemon.
const calls = (cuzk) => ({
  status: () => cuzk.status(),
  submit: () => cuzk.submit("c", [{ a: 1 }]),
  job: () => cuzk.job("1"),
  poll: () => cuzk.job("1", { wait: 100 }),
  wait: () => cuzk.wait("1"),
  result: () => cuzk.result("1"),
  cancel: () => cuzk.cancel("1"),
});

test("an answer that is not a JSON object is EPROTO for every call, and ends a wait", { timeout: 20_000 }, async () => {
  for (const body of ["null", '"queued"', '"done"', "42", "true", "[]", '[{"id": "1"}]', "not json", ""]) {
    const { socket } = await fake(answering(200, body));
    for (const [name, call] of Object.entries(calls(connect({ socket }))))
      await rejects(call(), { code: "EPROTO", message: /not a JSON object/ }).catch((e) => {
        throw new Error(`${name} on ${JSON.stringify(body)}: ${e.message}`);
      });
  }
});

test("a job's JSON of the wrong shape is EPROTO, not a TypeError or a wait without end", { timeout: 20_000 }, async () => {
  const bodies = [
    {},
    { state: 7 },
    { state: "finished" },
    { state: "done", partitions: 5 },
    { state: "done", partitions: { 0: {} } },
    { state: "done", partitions: [null] },
    { state: "failed", partitions: ["x"] },
    { state: "done", partitions: [{ index: "0" }] },
  ];
  for (const body of bodies) {
    const { socket } = await fake(answering(200, JSON.stringify(body)));
    const cuzk = connect({ socket });
    for (const call of [() => cuzk.job("1"), () => cuzk.wait("1"), () => cuzk.result("1"), () => cuzk.fullProve("c", {})])
      await rejects(call(), { code: "EPROTO", message: /not a job|no job id/ }).catch((e) => {
        throw new Error(`${JSON.stringify(body)}: ${e.message}`);
      });
  }
  // A done job whose partition has no proof object.
  const { socket } = await fake(answering(200, JSON.stringify(
    { id: "1", state: "done", partitions: [{ index: 0, state: "done", proof: "x", public: [] }] })));
  await rejects(connect({ socket }).result("1"), { code: "EPROTO", message: /carries no proof/ });
});

test("an error answer of any shape is a CuzkError with its status and a bounded message", async () => {
  const cases = [
    ['{"error": null}', /^\{"error": null\}$/, 500],
    ["", /^GET \/v1\/status: HTTP 500$/, 500],
    ['{"error": {"message": {"a": 1}, "code": {"b": 2}}}', /"message"/, 500],
    ["null", /^null$/, 500],
    ['{"error": {"message": "queue full", "code": 429}}', /^queue full$/, 429],
    ["<html>" + "x".repeat(100_000) + "</html>", /^<html>x+$/, 500],
  ];
  for (const [body, message, code] of cases) {
    const { socket } = await fake(answering(500, body));
    const e = await rejects(connect({ socket }).status(), { status: 500, code, message });
    assert.ok(e.message.length <= 1024, `a message of ${e.message.length} characters`);
  }
});

// A fake daemon that streams `total` bytes of a JSON string in 1 MiB chunks as fast as the client
// takes them, and counts what it could write before the client hung up.
async function streaming(total, headers = {}) {
  const sent = { bytes: 0, closed: null };
  const { socket } = await fake((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", ...headers });
    const chunk = Buffer.alloc(1 << 20, "x");
    res.on("close", () => (sent.closed = sent.bytes));
    const more = () => {
      while (sent.bytes < total && !res.destroyed) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) return res.once("drain", more);
      }
      res.end();
    };
    res.write('"');
    more();
  });
  return { socket, sent };
}

test("a 400 MB answer is cut off at the client's bound, not buffered", { timeout: 60_000 }, async () => {
  const MB = 1 << 20;
  // The default bound, 64 MiB.
  let { socket, sent } = await streaming(400 * MB);
  await rejects(connect({ socket }).status(), { code: "EMSGSIZE", message: /larger than 67108864 bytes/ });
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(sent.closed !== null && sent.closed < 80 * MB, `the fake daemon wrote ${sent.bytes} bytes`);
  // A bound of the caller's.
  ({ socket, sent } = await streaming(400 * MB));
  await rejects(connect({ socket, maxAnswerBytes: 4 * MB }).wait("1"), { code: "EMSGSIZE", jobId: "1" });
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(sent.closed !== null && sent.closed < 20 * MB, `the fake daemon wrote ${sent.bytes} bytes`);
  // A declared length over the bound is refused at the headers, before any of the body.
  const declared = await fake((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": 400 * MB });
    res.write("{");
  });
  await rejects(connect({ socket: declared.socket, requestTimeout: 20_000 }).status(), { code: "EMSGSIZE" });
  // An error answer is bounded alike.
  const errors = await fake((_req, res) => {
    res.writeHead(502, { "content-type": "text/html" });
    res.write(Buffer.alloc(2 * MB, "y"));
  });
  await rejects(connect({ socket: errors.socket, maxAnswerBytes: MB, requestTimeout: 20_000 }).status(), { code: "EMSGSIZE" });
  assert.throws(() => connect({ socket, maxAnswerBytes: 0 }), TypeError);
});

test("a silent daemon times out a call that has no timeout of its own", { timeout: 20_000 }, async () => {
  const { socket } = await fake(() => {});  // reads the request, never answers
  const cuzk = connect({ socket, requestTimeout: 300 });
  for (const [name, call] of Object.entries(calls(cuzk))) {
    if (name === "poll" || name === "wait" || name === "result") continue;  // long polls: below
    const t0 = Date.now();
    const e = await rejects(call(), { code: "ETIMEDOUT" });
    const took = Date.now() - t0;
    assert.ok(took >= 290 && took < 3000, `${name} timed out after ${took} ms`);
    if (name === "submit") assert.match(e.message, /timed out after 300 ms submitting/);
  }
  // The call's own timeout, where given, is the bound instead.
  const t0 = Date.now();
  await rejects(cuzk.status({ timeout: 800 }), { code: "ETIMEDOUT" });
  assert.ok(Date.now() - t0 >= 790, `status({timeout: 800}) timed out after ${Date.now() - t0} ms`);
  assert.throws(() => connect({ socket, requestTimeout: Infinity }), TypeError);
});

test("without any timeout given, a silent daemon times out status() and submit() after 30 s", async () => {
  const { socket } = await fake(() => {});
  const realSetTimeout = setTimeout;
  mock.timers.enable({ apis: ["setTimeout", "Date"] });
  try {
    const cuzk = connect({ socket });
    const outcomes = [cuzk.status(), cuzk.submit("c", [{ a: 1 }])].map((p) => p.then(() => "answered", (e) => e));
    let settled = false;
    Promise.all(outcomes).then(() => (settled = true));
    // Both requests are sent and waiting before the clock moves.
    await new Promise((r) => setImmediate(r));
    mock.timers.tick(29_900);
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, "a call ended before 30 s");
    mock.timers.tick(200);
    // A client without the bound never settles: a real timer (the mock's clock stands) ends the test.
    const stuck = new Promise((resolve) => realSetTimeout(() => resolve(["still waiting after 30 s"]), 5000).unref());
    for (const e of await Promise.race([Promise.all(outcomes), stuck])) {
      assert.ok(e instanceof CuzkError, String(e));
      assert.equal(e.code, "ETIMEDOUT");
    }
  } finally {
    mock.timers.reset();
  }
});
