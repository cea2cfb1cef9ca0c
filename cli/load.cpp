// `cuzk load`: the clients' closed loop (see load.hpp); the summary is in load_report.cpp.
#include "load.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "daemon_client.hpp"
#include "groth16/formats.hpp"
#include "groth16/verifier.hpp"
#include "math/curves.hpp"

namespace cuzk::cli {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// What the clients share: the request bodies, the next job's number and the first error.
struct Shared {
  explicit Shared(const LoadArgs& args) : a(args) {}
  const LoadArgs& a;
  std::vector<std::string> bodies;  // one per file, used in turn
  std::atomic<size_t> next{0};
  size_t limit = 0;                 // jobs of this phase; 0: until the deadline
  Clock::time_point deadline;
  std::atomic<bool> stop{false};    // the daemon is unreachable: every client stops
  std::atomic<size_t> warmup_failed{0};
  std::mutex mu;
  std::string first_error;
  void failed(const std::string& why) {
    std::lock_guard<std::mutex> g(mu);
    if (first_error.empty()) first_error = why;
  }
};

// One client: submit, wait for the result, again, until the phase's jobs or time are used up.
void client_loop(const HttpClient& c, Shared& sh, bool counted, std::vector<LoadJob>& done) {
  std::ostream quiet(nullptr);  // await's retry notices: a failure is reported once, at the end
  for (;;) {
    if (sh.stop) return;
    const size_t k = sh.next++;
    if (sh.limit ? k >= sh.limit : Clock::now() >= sh.deadline) return;
    LoadJob job;
    std::string error;
    const auto t0 = Clock::now();
    int rc = post_job(c, sh.bodies[k % sh.bodies.size()], job.id, error);
    AwaitResult res;
    if (rc == 0) {
      AwaitArgs aa;
      aa.job = job.id;
      aa.timeout_s = sh.a.job_timeout_s;
      aa.reconnect_s = 10;
      res = await_final(c, aa, quiet);
      rc = res.rc;
      error = res.error;
    }
    job.client_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    job.done = rc == 0;
    if (job.done && res.job.contains("created_ms") && res.job.contains("finished_ms")) {
      const auto& cr = res.job["created_ms"];
      const auto& fi = res.job["finished_ms"];
      if (cr.is_number() && fi.is_number()) job.daemon_ms = fi.get<double>() - cr.get<double>();
    }
    if (job.done && counted && !sh.a.vk.empty()) {
      const auto& p = res.job["partitions"][0];  // done: one partition, with its proof
      job.proof = p["proof"].dump();
      job.pub = p["public"].dump();
    }
    if (!job.done) sh.failed(job.id.empty() ? "submit: " + error : error);
    if (rc == exit_status::kIoError) sh.stop = true;  // unreachable (after await's retries)
    if (!counted) {
      if (!job.done) sh.warmup_failed++;
      continue;
    }
    if (job.done && !sh.a.out_dir.empty()) {
      try {
        fs::create_directories(fs::path(sh.a.out_dir) / job.id);
        write_proofs(res.job, (fs::path(sh.a.out_dir) / job.id).string());
      } catch (const std::exception& e) {
        sh.failed(std::string("writing the proof to ") + sh.a.out_dir + ": " + e.what());
        sh.stop = true;
      }
    }
    done.push_back(std::move(job));
  }
}

// Runs one phase (the warm-up or the counted jobs) on every client; the jobs each client finished.
std::vector<std::vector<LoadJob>> run_phase(const std::vector<HttpClient>& clients, Shared& sh, bool counted) {
  std::vector<std::vector<LoadJob>> done(clients.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < clients.size(); i++)
    threads.emplace_back([&, i] { client_loop(clients[i], sh, counted, done[i]); });
  for (auto& t : threads) t.join();
  return done;
}

}  // namespace

ProofCheck proof_check(const std::string& path) {
  return with_curve(json_curve(path), [&]<class C>() -> ProofCheck {
    auto key = std::make_shared<const groth16::PreparedKey<C>>(groth16::read_vk_json<C>(path));
    return [key, path](std::vector<LoadJob>& jobs, std::string& first_error) {
      struct Read {
        LoadJob* job;
        std::vector<typename C::Fr> pub;
        groth16::Proof<C> proof;
      };
      std::vector<Read> read;
      auto fail = [&](LoadJob& j, const std::string& why) {
        j.done = false;
        if (first_error.empty()) first_error = "job " + j.id + ": " + why;
      };
      for (auto& j : jobs) {
        if (!j.done) continue;
        try {
          read.push_back({&j, groth16::parse_public_json<C>("its public signals", j.pub),
                          groth16::parse_proof_json<C>("its proof", j.proof)});
        } catch (const std::exception& e) {
          fail(j, e.what());
        }
        j.proof.clear();
        j.pub.clear();
      }
      std::vector<groth16::ProofRef<C>> refs;
      for (const auto& r : read) refs.push_back({&r.pub, &r.proof});
      const std::vector<bool> ok = groth16::verify_batch(*key, refs);
      size_t verified = 0;
      for (size_t i = 0; i < read.size(); i++) {
        if (ok[i]) verified++;
        else fail(*read[i].job, "the proof does not verify against " + path);
      }
      return verified;
    };
  });
}

int cmd_load(const Endpoint& ep, const LoadArgs& a, std::ostream& out, std::ostream& err) {
  Shared sh(a);
  const auto& files = a.inputs.empty() ? a.witnesses : a.inputs;
  try {
    for (const auto& f : files) {
      SubmitArgs s;
      s.circuit = a.circuit;
      s.upload = a.upload;
      (a.inputs.empty() ? s.witnesses : s.inputs).push_back(f);
      sh.bodies.push_back(submit_body(s));
    }
  } catch (const std::invalid_argument& e) {
    err << "error: " << e.what() << "\n";
    return exit_status::kBadInput;
  }
  ProofCheck check;
  if (!a.vk.empty()) {
    try {
      check = proof_check(a.vk);
    } catch (const std::exception& e) {
      err << "error: " << e.what() << "\n";
      return exit_status::kBadInput;
    }
  }
  std::vector<HttpClient> clients;
  clients.reserve(a.clients);
  for (size_t i = 0; i < a.clients; i++) clients.emplace_back(ep, /*keep_alive=*/true);

  if (a.warmup) {
    sh.limit = a.warmup;
    run_phase(clients, sh, false);
  }
  LoadReport r;
  r.circuit = a.circuit;
  r.clients = a.clients;
  r.warmup = a.warmup;
  sh.next = 0;
  sh.limit = a.jobs;
  const auto t0 = Clock::now();
  sh.deadline = t0 + std::chrono::milliseconds((long long)(a.seconds * 1000));
  if (!sh.stop)
    for (auto& per_client : run_phase(clients, sh, true))
      for (auto& j : per_client) r.jobs.push_back(std::move(j));
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  r.first_error = sh.first_error;
  r.warmup_failed = sh.warmup_failed;
  if (check) {  // after the clock stopped: the check is not part of the jobs' time
    r.vk = a.vk;
    r.verified = (long)check(r.jobs, r.first_error);
  }
  print_load_report(r, a.timeline, a.json, out, err);
  if (sh.stop) return exit_status::kIoError;  // the daemon unreachable, or a proof not written
  return r.first_error.empty() ? 0 : kJobFailed;  // a job failed, counted or in the warm-up
}

}  // namespace cuzk::cli
