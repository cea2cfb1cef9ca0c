// `cuzk load`: what a proving service sees from many clients. N clients (threads, each with its own
// kept-alive connection) each submit a single-partition job, wait for its result (the long poll),
// and submit the next: a closed loop. It reports jobs done and failed, jobs per second, the
// clients' submit-to-result latency and, from the daemon's timeline log or its job records, the
// daemon's own JOB_SUBMIT to JOB_DONE time of the same jobs.
#pragma once
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "http_client.hpp"

namespace cuzk::cli {

struct LoadArgs {
  std::string circuit;
  std::vector<std::string> witnesses;  // .wtns files, one a job, used in turn
  std::vector<std::string> inputs;     // or circuit inputs files, sent inline
  bool upload = false;                 // send the witness bytes instead of their paths
  size_t clients = 16;
  size_t jobs = 0;          // counted jobs in all; 0: run for `seconds`
  double seconds = 0;
  size_t warmup = 0;        // jobs run first and not counted
  double job_timeout_s = 600;
  std::string out_dir;      // keep each counted job's proof in DIR/<job id>/
  std::string timeline;     // the daemon's timeline.log, for its JOB_SUBMIT -> JOB_DONE times
  std::string vk;           // verification_key.json: every counted proof is checked here too
  bool json = false;
};

// One finished job as a client saw it.
struct LoadJob {
  std::string id;          // empty when the submission was refused
  bool done = false;       // done, with a proof
  double client_ms = 0;    // submit sent to final answer received
  double daemon_ms = -1;   // the job's finished_ms - created_ms (the API's), -1 when unknown
  std::string proof, pub;  // with --vk: its proof.json and public.json text, until checked
};

// The run's outcome, as printed.
struct LoadReport {
  std::string circuit;
  size_t clients = 0, warmup = 0, warmup_failed = 0;
  std::vector<LoadJob> jobs;  // the counted ones
  std::string first_error;    // of the first job that failed, counted or not
  double wall_s = 0;
  long verified = -1;         // proofs that verified against --vk after the run; -1 without it
  std::string vk;
};

// Checks the proofs of the done jobs among `jobs` against one verification key, all at once. A job
// whose proof does not verify, or cannot be read, is no longer done; the first of them is named in
// `first_error` when that is still empty. Returns the proofs that verified.
using ProofCheck = std::function<size_t(std::vector<LoadJob>& jobs, std::string& first_error)>;
// The check for the key in the snarkjs verification_key.json at `path` (any curve cuzk knows); throws
// FormatError when it cannot be read.
ProofCheck proof_check(const std::string& path);

int cmd_load(const Endpoint& ep, const LoadArgs& a, std::ostream& out = std::cout, std::ostream& err = std::cerr);

// load_report.cpp: the summary, as text or JSON. `timeline` (may be empty) is read for the daemon's
// JOB_SUBMIT -> JOB_DONE of the done jobs; without it, the jobs' created_ms/finished_ms are used.
void print_load_report(const LoadReport& r, const std::string& timeline, bool json, std::ostream& out,
                       std::ostream& err);

}  // namespace cuzk::cli
