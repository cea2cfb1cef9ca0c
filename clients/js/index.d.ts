// Types of the cuzk daemon's node client (index.js); the API is described in docs/API.md.

/** A signal value as snarkjs accepts it: a number, a bigint, or a decimal (or 0x, 0o, 0b) string. */
export type SignalValue = string | number | bigint;
/** A signal's value, or an array signal's values (nested for several dimensions). */
export type SignalValues = SignalValue | SignalValues[];
/** One partition's circuit inputs: what `snarkjs wtns calculate` reads, or `{path}` naming such a
 *  JSON file inside the daemon's `daemon.input_dirs`. */
export type CircuitInput = { [signal: string]: SignalValues } | { path: string };

/** A Groth16 proof exactly as snarkjs.groth16.fullProve returns it (decimal strings). */
export interface Proof {
  pi_a: [string, string, string];
  pi_b: [[string, string], [string, string], [string, string]];
  pi_c: [string, string, string];
  protocol: "groth16";
  curve: string;
}

/** What snarkjs.groth16.fullProve returns. */
export interface ProveResult {
  proof: Proof;
  publicSignals: string[];
}

export type Priority = "critical" | "high" | "normal" | "low";
export type JobState = "queued" | "running" | "done" | "failed" | "cancelled";
export type PartitionState = "queued" | "synthesizing" | "ready" | "proving" | "done" | "failed" | "cancelled";

export interface Partition {
  index: number;
  state: PartitionState;
  attempts: number;
  error: string | null;
  timings?: { queue_ms?: number; synth_ms?: number; wait_ms?: number; prove_ms?: number };
  /** Present only in state "done". */
  proof?: Proof;
  /** Present only in state "done". */
  public?: string[];
}

/** GET /v1/proofs/{id}. */
export interface Job {
  id: string;
  circuit: string;
  priority: Priority;
  input_kind: "witnesses" | "inputs";
  request_id: string | null;
  state: JobState;
  error: string | null;
  created_ms: number;
  finished_ms: number | null;
  partitions: Partition[];
}

export interface Worker {
  name: string;
  kind: "synth" | "gpu";
  index: number;
  pid: number;
  state: "starting" | "idle" | "busy" | "backoff" | "failed" | "stopped";
  restarts: number;
  job: string | null;
  partition: number | null;
  [key: string]: unknown;
}

/** GET /v1/status. */
export interface Status {
  instance: string;
  pid: number;
  state: string;
  uptime_s: number;
  backend: string;
  workers: Worker[];
  [key: string]: unknown;
}

export interface ConnectOptions {
  /** The daemon's unix socket (daemon.socket). Give this or url. */
  socket?: string;
  /** The daemon's TCP address, "http://127.0.0.1:8700" (daemon.tcp). Give this or socket. */
  url?: string;
  /** The bearer token TCP requests need (daemon.token). */
  token?: string;
  /** Default timeout in ms of every call; none when unset (each request is still bounded by
   *  requestTimeout, and a long poll by its wait plus 30 s). */
  timeout?: number;
  /** The most one request may take, in ms, where its call has no timeout: 30000. A long poll is
   *  bounded by its wait instead. */
  requestTimeout?: number;
  /** The most bytes of one answer the client holds: 64 MiB. A larger answer is cut off as it
   *  arrives and rejects with code "EMSGSIZE". */
  maxAnswerBytes?: number;
  /** While waiting for a job, how long in ms an unreachable daemon (or a 502/503/504) is retried: 30000. */
  reconnect?: number;
}

export interface CallOptions {
  /** ms; on expiry the call rejects with code "ETIMEDOUT". A job is never cancelled for it. */
  timeout?: number;
}

export interface SubmitOptions extends CallOptions {
  /** "normal" when unset. Above the daemon's daemon.max_client_priority ("high" by default) only
   *  operators may ask for: a 403 CuzkError for other clients. */
  priority?: Priority;
  /** Idempotency key: the same request with the same id returns the same job. */
  requestId?: string;
}

export interface JobOptions extends CallOptions {
  /** Long poll: answered once the job is final or after this many ms (at most an hour). */
  wait?: number;
}

export declare class CuzkError extends Error {
  name: "CuzkError";
  /** The daemon's HTTP status (400, 401, 404, 409, 429, 503...); undefined when no error status came. */
  status?: number;
  /** The daemon's error code (its HTTP status), or "ETIMEDOUT", "ECANCELLED" (the job was
   *  cancelled), "EJOBFAILED" (the job failed), "EPROTO" (an answer the client cannot read: not a JSON
   *  object, or not a job where one was asked for), "EMSGSIZE" (an answer over maxAnswerBytes), or a
   *  system error code such as "ECONNREFUSED" or "ENOENT" when the daemon cannot be reached. */
  code?: number | string;
  /** The job concerned, where there is one. With ETIMEDOUT the job goes on: wait for it again
   *  with result(jobId), or cancel(jobId). */
  jobId?: string;
  /** The job's last JSON seen, for a failed, cancelled or timed-out job. */
  job?: Job;
  /** The index of the failed partition, for EJOBFAILED. */
  partition?: number;
}

export interface Client {
  /** Where the client connects: the socket path or the URL's origin. */
  readonly where: string;
  /** One job, one partition per input; resolves to the proofs in the inputs' order once it is done. */
  prove(circuit: string, inputs: CircuitInput[], opts?: SubmitOptions): Promise<ProveResult[]>;
  /** snarkjs.groth16.fullProve(input, wasm, zkey) with the daemon's `[[circuits]]` entry by name. */
  fullProve(circuit: string, input: CircuitInput, opts?: SubmitOptions): Promise<ProveResult>;
  /** Submits a job; resolves to its id. */
  submit(circuit: string, inputs: CircuitInput[], opts?: SubmitOptions): Promise<string>;
  /** The job's JSON now, or with `wait` once final or when the wait has passed (a long poll). */
  job(id: string, opts?: JobOptions): Promise<Job>;
  /** The job's JSON once it is final (done, failed or cancelled). */
  wait(id: string, opts?: CallOptions): Promise<Job>;
  /** The proofs of a job once it is done; rejects with EJOBFAILED or ECANCELLED otherwise. */
  result(id: string, opts?: CallOptions): Promise<ProveResult[]>;
  /** Cancels a job that is not final; a final one is a 409. */
  cancel(id: string, opts?: CallOptions): Promise<{ id: string; state: "cancelled" }>;
  /** GET /v1/status. */
  status(opts?: CallOptions): Promise<Status>;
}

export declare function connect(options: ConnectOptions): Client;
