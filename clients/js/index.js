// A node client for the cuzk daemon (docs/API.md): Groth16 proofs from circuit inputs, returned as
// snarkjs.groth16.fullProve returns them, over the daemon's unix socket or over TCP with its token.
import http from "node:http";

const FINAL = new Set(["done", "failed", "cancelled"]);
// One long poll asks for at most this long; shorter than the daemon's cap (3600 s) so that a
// connection that died silently is noticed within a minute and a half.
const POLL_S = 60;
// A long poll with no answer this long after its wait was due is treated as a lost connection.
const POLL_GRACE_MS = 30_000;
// While waiting for a job, how long a daemon that cannot be reached (restarting, or 503 while its
// job store is away) is retried before giving up. Jobs survive a restart, so waiting is worth it.
const RECONNECT_MS = 30_000;
// Failures of a request worth retrying while waiting for a job: the job is still there.
const TRANSIENT_STATUS = new Set([502, 503, 504]);
const TRANSIENT_CODE = new Set(["ECONNREFUSED", "ECONNRESET", "ENOENT", "EPIPE", "ESTALLED"]);
// A request other than a long poll, when the call has no timeout of its own, gets no longer than
// this for its whole answer: a daemon that stops answering must not hold a caller forever.
const REQUEST_TIMEOUT_MS = 30_000;
// The most of one answer the client holds. A job's JSON is its partitions' proofs and public
// signals, a few KiB each; an answer past this is refused as it arrives, never buffered whole.
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
// What a daemon's error may put into a CuzkError's message.
const MAX_MESSAGE_CHARS = 1024;
const JOB_STATES = new Set(["queued", "running", ...FINAL]);

export class CuzkError extends Error {
  constructor(message, { status, code, jobId, job, partition, cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.name = "CuzkError";
    this.status = status;
    this.code = code;
    if (jobId !== undefined) this.jobId = jobId;
    if (job !== undefined) this.job = job;
    if (partition !== undefined) this.partition = partition;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
const deadlineOf = (timeout) => (timeout === undefined || timeout === null ? Infinity : Date.now() + timeout);
// snarkjs accepts bigint signal values; JSON has no bigint, and the daemon reads decimal strings.
const toJson = (value) => JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v));

export function connect(options = {}) {
  return new Client(options);
}

class Client {
  #target;   // http.request options naming the daemon: socketPath, or host and port
  #prefix;   // a path prefix from the URL (a daemon behind a reverse proxy), "" for none
  #headers;
  #timeout;
  #reconnect;
  #requestTimeout;
  #maxAnswerBytes;

  constructor({ socket, url, token, timeout, reconnect = RECONNECT_MS, requestTimeout = REQUEST_TIMEOUT_MS,
                maxAnswerBytes = MAX_ANSWER_BYTES } = {}) {
    if (!socket === !url) throw new TypeError("connect: give either socket (a unix socket path) or url");
    this.#headers = token ? { authorization: `Bearer ${token}` } : {};
    if (socket) {
      this.#target = { socketPath: socket };
      this.#prefix = "";
      this.where = socket;
    } else {
      const u = new URL(url);
      if (u.protocol !== "http:") throw new TypeError(`connect: the daemon speaks plain http, not ${u.protocol}`);
      this.#target = { host: u.hostname.replace(/^\[(.*)\]$/, "$1"), port: u.port || 80 };
      this.#prefix = u.pathname.replace(/\/+$/, "");
      this.where = u.origin;
    }
    for (const [name, v] of [["requestTimeout", requestTimeout], ["maxAnswerBytes", maxAnswerBytes]])
      if (!(Number.isFinite(v) && v > 0)) throw new TypeError(`connect: ${name} must be a positive number, not ${v}`);
    this.#timeout = timeout;
    this.#reconnect = reconnect;
    this.#requestTimeout = requestTimeout;
    this.#maxAnswerBytes = maxAnswerBytes;
  }

  // The daemon's state: workers, devices, queues (GET /v1/status).
  async status(opts = {}) {
    return this.#request("GET", "/v1/status", undefined, deadlineOf(opts.timeout ?? this.#timeout));
  }

  // Submits one job, one partition per entry of inputs; resolves to its id.
  async submit(circuit, inputs, opts = {}) {
    return this.#submit(circuit, inputs, opts, deadlineOf(opts.timeout ?? this.#timeout));
  }

  // The job's JSON now, or, with wait (ms), once it is final or wait has passed.
  async job(id, opts = {}) {
    const wait = Math.min(opts.wait ?? 0, 3_600_000);  // the daemon's cap: an hour
    const path = `/v1/proofs/${encodeURIComponent(id)}` + (wait > 0 ? `?wait=${(wait / 1000).toFixed(3)}` : "");
    const stallAt = wait > 0 ? Date.now() + wait + POLL_GRACE_MS : Infinity;
    const job = await this.#request("GET", path, undefined, deadlineOf(opts.timeout ?? this.#timeout),
                                    { jobId: String(id), stallAt });
    return checkJob(job, `GET ${path}`, String(id));
  }

  // Cancels a job that is not final (DELETE /v1/proofs/{id}); 409 if it already is.
  async cancel(id, opts = {}) {
    const path = `/v1/proofs/${encodeURIComponent(id)}`;
    return this.#request("DELETE", path, undefined, deadlineOf(opts.timeout ?? this.#timeout), { jobId: String(id) });
  }

  // The job's JSON once it is final, whatever its state.
  async wait(id, opts = {}) {
    return this.#wait(String(id), deadlineOf(opts.timeout ?? this.#timeout), opts.timeout ?? this.#timeout);
  }

  // The proofs of a job once it is done, one {proof, publicSignals} per partition in order.
  async result(id, opts = {}) {
    return resultsOf(await this.wait(id, opts));
  }

  // Several inputs proved as one job: one {proof, publicSignals} per input, in order.
  async prove(circuit, inputs, opts = {}) {
    const timeout = opts.timeout ?? this.#timeout;
    const deadline = deadlineOf(timeout);
    const id = await this.#submit(circuit, inputs, opts, deadline, timeout);
    return resultsOf(await this.#wait(id, deadline, timeout));
  }

  // The drop-in for snarkjs.groth16.fullProve(input, wasm, zkey): the daemon's circuit by name.
  async fullProve(circuit, input, opts = {}) {
    return (await this.prove(circuit, [input], opts))[0];
  }

  async #submit(circuit, inputs, opts, deadline, timeout = opts.timeout ?? this.#timeout) {
    if (!Array.isArray(inputs)) throw new TypeError("inputs must be an array, one object of input signals per partition");
    const body = { circuit, inputs };
    if (opts.priority !== undefined) body.priority = opts.priority;
    if (opts.requestId !== undefined) body.request_id = opts.requestId;
    try {
      const r = await this.#request("POST", "/v1/proofs", toJson(body), deadline);
      if (typeof r.id !== "string") throw new CuzkError("POST /v1/proofs: the answer has no job id", { code: "EPROTO" });
      return r.id;
    } catch (e) {
      if (e.code !== "ETIMEDOUT") throw e;
      // The daemon may have made the job before the answer was lost; only a request id finds it.
      throw new CuzkError(`timed out after ${timeout ?? this.#requestTimeout} ms submitting a job of circuit '${circuit}'` +
                          (opts.requestId === undefined ? "" : ` (request id '${opts.requestId}' names it if it was made)`),
                          { code: "ETIMEDOUT" });
    }
  }

  // Long polls until the job is final. A poll answered before the job is final (its wait passed)
  // is simply asked again; the deadline, not the daemon, ends the waiting.
  async #wait(id, deadline, timeout) {
    let job;
    let lastContact = Date.now();
    let backoff = 200;
    const timedOut = () =>
      new CuzkError(`timed out after ${timeout} ms waiting for job ${id}` +
                    (job ? ` (state ${job.state})` : "") + "; the job was not cancelled",
                    { code: "ETIMEDOUT", jobId: id, job });
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw timedOut();
      const waitS = Math.min(POLL_S, left / 1000);
      const sent = Date.now();
      try {
        job = await this.#request("GET", `/v1/proofs/${encodeURIComponent(id)}?wait=${waitS.toFixed(3)}`, undefined,
                                  deadline, { jobId: id, stallAt: sent + waitS * 1000 + POLL_GRACE_MS });
        lastContact = Date.now();
        backoff = 200;
      } catch (e) {
        if (e.code === "ETIMEDOUT") throw timedOut();
        const transient = TRANSIENT_STATUS.has(e.status) || TRANSIENT_CODE.has(e.code);
        if (!transient || Date.now() - lastContact > this.#reconnect) throw e;
        await sleep(Math.min(backoff, deadline - Date.now()));
        backoff = Math.min(backoff * 2, 2000);
        continue;
      }
      if (FINAL.has(checkJob(job, `GET /v1/proofs/${id}`, id).state)) return job;
      // A daemon that answers long polls early must not turn this loop into a busy one.
      if (Date.now() - sent < 250) await sleep(Math.min(250, deadline - Date.now()));
    }
  }

  // One HTTP request; resolves to the answer, a JSON object, and rejects with a CuzkError for
  // anything else: EPROTO for an answer that is not a JSON object, EMSGSIZE for one larger than
  // maxAnswerBytes (cut off as it arrives), ETIMEDOUT at deadline (the caller's timeout, or
  // requestTimeout from now where the call has none and this is not a long poll), ESTALLED at
  // stallAt, if that is earlier (a long poll whose answer is overdue: a lost connection). Each
  // request has its own connection:
  // the daemon closes idle ones, and a kept one could be closed just as it is reused, failing a
  // request the daemon never saw.
  #request(method, path, body, deadline, { jobId, stallAt = Infinity } = {}) {
    return new Promise((resolve, reject) => {
      const headers = { ...this.#headers, accept: "application/json" };
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = Buffer.byteLength(body);
      }
      let timer;
      let settled = false;
      const settle = (e, value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!e) return resolve(value);
        if (jobId !== undefined && e.jobId === undefined) e.jobId = jobId;
        reject(e);
      };
      const tooBig = () => {
        settle(new CuzkError(`${method} ${path}: the daemon's answer is larger than ${this.#maxAnswerBytes} bytes ` +
                             "(maxAnswerBytes)", { status: res.statusCode, code: "EMSGSIZE" }));
        req.destroy();
      };
      let res;
      const req = http.request({ ...this.#target, method, path: this.#prefix + path, headers, agent: false }, (r) => {
        res = r;
        if (Number(res.headers["content-length"]) > this.#maxAnswerBytes) return tooBig();
        const chunks = [];
        let size = 0;
        res.on("data", (c) => {
          size += c.length;
          if (size > this.#maxAnswerBytes) return tooBig();
          chunks.push(c);
        });
        res.on("error", (e) => settle(new CuzkError(`${method} ${path}: ${e.message}`, { code: e.code, cause: e })));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let json;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          if (res.statusCode >= 400) {
            // The daemon's errors are {"error": {"code": <status>, "message": ...}}; anything else
            // (a proxy's page) is passed on as text.
            const err = isObject(json) && isObject(json.error) ? json.error : {};
            const message = typeof err.message === "string" ? err.message : text.trim();
            const code = typeof err.code === "number" || typeof err.code === "string" ? err.code : res.statusCode;
            return settle(new CuzkError(message.slice(0, MAX_MESSAGE_CHARS) || `${method} ${path}: HTTP ${res.statusCode}`,
                                        { status: res.statusCode, code }));
          }
          if (!isObject(json))
            return settle(new CuzkError(`${method} ${path}: the daemon's answer is not a JSON object`,
                                        { status: res.statusCode, code: "EPROTO" }));
          settle(null, json);
        });
      });
      req.on("error", (e) =>
        settle(new CuzkError(`cannot reach the daemon at ${this.where}: ${e.message}`, { code: e.code, cause: e })));
      if (deadline === Infinity && stallAt === Infinity) deadline = Date.now() + this.#requestTimeout;
      const until = Math.min(deadline, stallAt);
      const code = stallAt < deadline ? "ESTALLED" : "ETIMEDOUT";
      timer = setTimeout(() => {
        settle(new CuzkError(`${method} ${path}: no answer from the daemon at ${this.where} in time`, { code }));
        req.destroy();
      }, Math.max(0, until - Date.now()));
      req.end(body);
    });
  }
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

// A job's JSON as GET /v1/proofs/{id} answers it, or an EPROTO CuzkError: a known state, and
// partitions (where present) an array of objects with an index.
function checkJob(job, what, jobId) {
  const bad = (why) => new CuzkError(`${what}: the daemon's answer is not a job (${why})`, { code: "EPROTO", jobId });
  if (!JOB_STATES.has(job.state)) throw bad(`state ${JSON.stringify(job.state)?.slice(0, 40)}`);
  const parts = job.partitions ?? [];
  if (!Array.isArray(parts)) throw bad("partitions is not an array");
  if (!parts.every((p) => isObject(p) && Number.isInteger(p.index))) throw bad("a partition is not an object with an index");
  return job;
}

function resultsOf(job) {
  const parts = [...(job.partitions ?? [])].sort((a, b) => a.index - b.index);
  if (job.state === "done") {
    const missing = parts.find((p) => p.state !== "done" || !isObject(p.proof) || !Array.isArray(p.public));
    if (parts.length === 0 || missing)
      throw new CuzkError(`job ${job.id} is done but partition ${missing?.index ?? 0} carries no proof`,
                          { code: "EPROTO", jobId: job.id, job });
    return parts.map((p) => ({ proof: p.proof, publicSignals: p.public }));
  }
  if (job.state === "cancelled")
    throw new CuzkError(`job ${job.id} was cancelled`, { code: "ECANCELLED", jobId: job.id, job });
  // The job's error names the partition and the reason; a partition's own is the fallback.
  const failed = parts.find((p) => p.state === "failed");
  const reason = job.error ?? (failed ? `partition ${failed.index}: ${failed.error}` : `state ${job.state}`);
  throw new CuzkError(`job ${job.id} failed: ${reason}`, { code: "EJOBFAILED", jobId: job.id, job, partition: failed?.index });
}
