// cuzk-gpu-worker: one per device. Keeps the circuits' proving keys resident within its budget (on
// the GPU for the cuda backend), learning circuits added at run time when their first proof comes,
// and proves slots of its device's ring in place. Its main()
// and message loop are worker/worker_main.hpp's; this file holds its work.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "common/exit_codes.hpp"
#include "config/config.hpp"
#include "gpu-worker/key_cache.hpp"
#include "groth16/formats.hpp"
#include "groth16/parallel.hpp"
#include "groth16/prover.hpp"
#include "groth16/verifier.hpp"
#include "shm/results.hpp"
#include "shm/slot_ring.hpp"
#include "timeline/events.hpp"
#include "worker/worker_main.hpp"

using namespace cuzk;
using namespace cuzk::shm;
using cuzk::worker::WorkerArgs;
using cuzk::worker::WorkerLink;
using cuzk::worker::current_affinity;
namespace fs = std::filesystem;

namespace {

// Two proofs in a row did not verify (gpu.verify).
struct Unverified : std::exception {
  uint32_t circuit;
  explicit Unverified(uint32_t c) : circuit(c) {}
  const char* what() const noexcept override { return "the proof does not verify"; }
};

// Host work of a proof that needs its public signals and the key alone, done while the device
// computes the proof: its blinding and the public part of its check (prepared in KeyOn). Whoever
// comes first runs it: a finisher thread that took it off the queue, or the proof's own finish,
// which then waits for nothing that is not running.
class Ahead {
 public:
  virtual ~Ahead() = default;
  void run() {
    if (claimed_.exchange(true)) return;
    work();
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
  }
  // Runs it, or waits for the thread that does.
  void wait() {
    run();
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_; });
  }

 protected:
  virtual void work() = 0;  // must not throw

 private:
  std::atomic<bool> claimed_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

// A proof whose compute is done (H and the MSMs, on the device): what is left is host work, the
// proof from the raw MSMs with fresh blinding, its check and its files.
struct Computed {
  // Its blinding and public part, when they were prepared during the compute.
  std::shared_ptr<Ahead> ahead;
  virtual ~Computed() = default;
  virtual void assemble() = 0;
  virtual bool verify() const = 0;
  // Whether o is a proof of the same key, which verify_together can check with this one.
  virtual bool same_key(const Computed& o) const = 0;
  // One verdict per proof of `all` (proofs of this key, same_key), checked at once: true for a proof
  // that verifies. A proof that verify() would refuse with an exception is given false.
  virtual std::vector<bool> verify_together(const std::vector<const Computed*>& all) const = 0;
  virtual void write_public(const std::string& path) const = 0;
  virtual void write_proof(const std::string& path) const = 0;
};

// A circuit's proving key on the backend of its curve, loaded and given back by the KeyCache.
// compute() runs a slot's compute in place on a resident key; last_spans() and last_host_times()
// describe it until the next compute.
struct Key : gpuw::CachedKey {
  // Throws std::invalid_argument unless the slot's vectors fit this key (checked before a slot
  // joins a batch, so that one slot's fault fails that slot alone).
  virtual void check(const Segment& seg, uint32_t slot) const = 0;
  // The host work of slot's proof that can be done before its compute (Ahead::run, on another thread).
  virtual std::shared_ptr<Ahead> ahead(const Segment& seg, uint32_t slot) const = 0;
  // The compute of several slots' proofs in one pass on the resident key, one each, in order.
  virtual std::vector<std::unique_ptr<Computed>> compute(const Segment& seg, const std::vector<uint32_t>& slots) = 0;
  // How many slots compute takes at once for this key (ProverBackend::batch_limit).
  virtual size_t batch_limit() const = 0;
  virtual std::vector<StageSpan> last_spans() const = 0;
  virtual std::optional<groth16::ProverHostTimes> last_host_times() const = 0;
};

// A circuit added at run time whose key cannot serve on this device (its file unreadable, larger
// than the budget): each of its proofs fails with the reason, and the worker serves the others.
struct RefusedKey : Key {
  std::string why;
  explicit RefusedKey(std::string w) : why(std::move(w)) {}
  std::string refusal() const override { return why; }
  size_t load(size_t, bool, gpuw::LoadParts&) override { throw std::invalid_argument(why); }
  void evict() override {}
  void drop_host() override {}
  bool has_host() const override { return false; }
  void check(const Segment&, uint32_t) const override { throw std::invalid_argument(why); }
  std::shared_ptr<Ahead> ahead(const Segment&, uint32_t) const override { throw std::invalid_argument(why); }
  std::vector<std::unique_ptr<Computed>> compute(const Segment&, const std::vector<uint32_t>&) override {
    throw std::invalid_argument(why);
  }
  size_t batch_limit() const override { return 1; }
  std::vector<StageSpan> last_spans() const override { return {}; }
  std::optional<groth16::ProverHostTimes> last_host_times() const override { return std::nullopt; }
};

template <class C>
struct KeyOn : Key {
  using Fr = typename C::Fr;
  const std::string path;
  const std::string backend_name;
  const BackendOptions options;
  const std::string evaluators;                               // the evaluator cache's folder
  std::shared_ptr<const groth16::ZKey<C>> zk;                 // the host copy, while there is one
  std::shared_ptr<const KeyImage<C>> image;                   // the host copy as loads take it
  bool image_reuse = false;                                   // image prepared for later loads
  // The verification key with e(alpha, beta) computed once, for every proof's check.
  std::shared_ptr<const groth16::PreparedKey<C>> pk;
  std::unique_ptr<groth16::ProverBackend<C>> prover;          // the resident key, while it is

  struct AheadOn : Ahead {
    std::shared_ptr<const groth16::ZKey<C>> zk;
    std::shared_ptr<const groth16::PreparedKey<C>> pk;
    std::vector<Fr> pub;
    groth16::Blinding<C> blinding;
    std::optional<groth16::PublicPart<C>> part;  // none when the signals do not fit the key
    void work() override {
      blinding = groth16::draw_blinding(*zk, {});
      try {
        part = groth16::prepare_public(*pk, pub);
      } catch (const std::exception&) {
        // Left empty: the proof's own check says why.
      }
    }
  };

  // A proof holds the key's host parts itself: the key may be given back while it is finished.
  struct Proof : Computed {
    std::shared_ptr<const groth16::ZKey<C>> zk;
    std::shared_ptr<const groth16::PreparedKey<C>> pk;
    groth16::RawMsms<C> raw;
    std::vector<Fr> pub;
    groth16::Proof<C> proof;
    AheadOn* prepared() const {
      if (!ahead) return nullptr;
      ahead->wait();
      return static_cast<AheadOn*>(ahead.get());
    }
    void assemble() override {
      const AheadOn* a = prepared();
      proof = a ? groth16::assemble_proof(raw, a->blinding) : groth16::assemble_proof(*zk, raw, {});
    }
    bool verify() const override { return groth16::verify_proof(*pk, pub, proof); }
    bool same_key(const Computed& o) const override {
      const auto* p = dynamic_cast<const Proof*>(&o);
      return p && p->pk == pk;
    }
    std::vector<bool> verify_together(const std::vector<const Computed*>& all) const override {
      // A proof alone, its public part ready: the check that waits least.
      const AheadOn* a = all.size() == 1 && all.front() == this ? prepared() : nullptr;
      if (a && a->part) {
        try {
          return {groth16::verify_proof(*pk, *a->part, proof)};
        } catch (const std::invalid_argument&) {
          return {false};
        }
      }
      std::vector<groth16::ProofRef<C>> refs;
      for (const Computed* c : all) {
        if (!same_key(*c)) throw std::logic_error("verify_together: proofs of different keys");
        const auto& p = static_cast<const Proof&>(*c);
        refs.push_back({&p.pub, &p.proof});
      }
      return groth16::verify_batch(*pk, refs);
    }
    void write_public(const std::string& path) const override { groth16::write_public_json<C>(path, pub); }
    void write_proof(const std::string& path) const override { groth16::write_proof_json(path, proof); }
  };

  KeyOn(std::string zkey_path, std::string backend, const BackendOptions& bo, std::string evaluator_cache)
      : path(std::move(zkey_path)), backend_name(std::move(backend)), options(bo), evaluators(std::move(evaluator_cache)) {}
  size_t load(size_t limit, bool reuse, gpuw::LoadParts& parts) override {
    using clock = std::chrono::steady_clock;
    auto ms_since = [](clock::time_point t) { return std::chrono::duration<double, std::milli>(clock::now() - t).count(); };
    BackendOptions o = options;
    o.key_memory_limit = limit;
    auto be = make_backend<C>(backend_name, o);
    auto t = clock::now();
    if (!zk) {
      // A device checks the points itself, in milliseconds, where the host would take seconds;
      // the matrices come from the evaluator cache, so the coefficients are not decoded either.
      const bool on_device = std::string(be->name()) == "cuda";
      zk = std::make_shared<const groth16::ZKey<C>>(
          groth16::read_zkey<C>(path, on_device ? ZKeyMemory::ForDevice : ZKeyMemory::Copy));
      pk = std::make_shared<const groth16::PreparedKey<C>>(groth16::vk_from_zkey(*zk));
      parts.read_ms = ms_since(t);
      t = clock::now();
    }
    // The image is made once per host copy, page-locked where later loads will copy it again.
    if (!image || (reuse && !image_reuse)) {
      std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev = image ? image->ev : nullptr;
      if (!ev) ev = std::make_shared<const groth16::ConstraintEvaluator<C>>(
                    groth16::ConstraintEvaluator<C>::open_cached(path, evaluators));
      image = be->prepare(zk, reuse, std::move(ev)), image_reuse = reuse;
    }
    parts.prepare_ms = ms_since(t);
    try {
      prover = be->load(image);
    } catch (const FormatError&) {
      drop_host();  // points the device refused: the next load reads the file again, as it is then
      throw;
    }
    const groth16::KeyLoadTimes lt = prover->load_times();
    parts.upload_ms = lt.upload_ms, parts.check_ms = lt.check_ms, parts.tables_ms = lt.tables_ms;
    parts.upload_bytes = lt.upload_bytes, parts.table_bytes = lt.table_bytes, parts.pinned_bytes = image->pinned_bytes;
    return prover->device_bytes();
  }
  void evict() override { prover.reset(); }
  void drop_host() override { image.reset(), zk.reset(), pk.reset(); }
  bool has_host() const override { return zk != nullptr; }
  // Without a, b, c in the slot (synthesis.abc = "gpu") the backend evaluates them from w.
  groth16::SynthesizedView<C> view(const Segment& seg, uint32_t slot) const {
    const SlotHeader& h = seg.slot(slot);
    const bool abc = seg.abc_in_slots();
    return {seg.w<Fr>(slot), h.n_vars, abc ? seg.a<Fr>(slot) : nullptr, abc ? seg.b<Fr>(slot) : nullptr,
            abc ? seg.c<Fr>(slot) : nullptr, h.domain_size};
  }
  void check(const Segment& seg, uint32_t slot) const override {
    groth16::check_synthesized(*zk, view(seg, slot));
  }
  std::shared_ptr<Ahead> ahead(const Segment& seg, uint32_t slot) const override {
    auto a = std::make_shared<AheadOn>();
    a->zk = zk, a->pk = pk;
    const Fr* w = seg.w<Fr>(slot);
    a->pub.assign(w + 1, w + 1 + zk->n_public);  // check() has checked n_vars
    return a;
  }
  std::vector<std::unique_ptr<Computed>> compute(const Segment& seg, const std::vector<uint32_t>& slots) override {
    std::vector<groth16::SynthesizedView<C>> views;
    for (uint32_t slot : slots) views.push_back(view(seg, slot));
    std::vector<groth16::RawMsms<C>> raw = prover->msms_synthesized_batch(views);
    std::vector<std::unique_ptr<Computed>> out;
    for (size_t i = 0; i < slots.size(); i++) {
      auto p = std::make_unique<Proof>();
      p->zk = zk, p->pk = pk;
      p->raw = raw.at(i);
      p->pub.assign(views[i].w + 1, views[i].w + 1 + zk->n_public);  // the batch checked n_vars
      out.push_back(std::move(p));
    }
    return out;
  }
  size_t batch_limit() const override { return prover->batch_limit(); }
  std::vector<StageSpan> last_spans() const override { return prover->last_spans(); }
  std::optional<groth16::ProverHostTimes> last_host_times() const override { return prover->last_host_times(); }
};

// GPU_END's device-busy keys: kernel_ms, the union of the proof's stage spans (stages on
// concurrent streams overlap), and kernel_<stage>_ms per stage; for a proof of a batch of n, its
// share (1/n) of the batch's, so that a device's proofs sum to its busy time.
void add_busy(tl::Kv& kv, const std::vector<StageSpan>& spans, size_t n) {
  if (spans.empty()) return;
  const StageBusy b = summarize_spans(spans);
  kv.ms(tl::kKernelMs, b.total_ms / double(n));
  for (const auto& [stage, ms] : b.stages) kv.ms(tl::kernel_stage_key(stage), ms / double(n));
}

// A proof's two result files, each written under a temporary name and renamed into place by
// commit() (fsync-free: a reader never sees half of one). write() starts writing a proof on a
// thread of its own, so that the files (about 0.6 ms on the H200 host) are written while
// verified() checks the proof (about 1.7 ms); write_now() writes them on the calling thread (a
// batch's writer). Temporary files left uncommitted are removed.
class ResultFiles {
 public:
  ResultFiles(fs::path pub, fs::path proof) : dst_{std::move(pub), std::move(proof)} {
    for (int i = 0; i < 2; i++) tmp_[i] = dst_[i].string() + ".tmp" + std::to_string(getpid());
  }
  ~ResultFiles() {
    if (writer_.joinable()) writer_.join();
    std::error_code ec;
    for (const auto& t : tmp_) fs::remove(t, ec);
  }
  void write(const Computed& p) {
    join();
    writer_ = std::thread([this, &p] { write_now(p); });
  }
  // A failure is thrown by the next verified() or commit().
  void write_now(const Computed& p) {
    try {
      fs::create_directories(dst_[0].parent_path());
      p.write_public(tmp_[0]);
      p.write_proof(tmp_[1]);
    } catch (...) {
      error_ = std::current_exception();
    }
  }
  // Checks the proof while the writer runs, and waits for the writer.
  bool verified(const Computed& p) {
    bool ok = false;
    try {
      ok = p.verify();
    } catch (...) {
      join();
      throw;
    }
    join();
    return ok;
  }
  void commit() {
    join();
    for (int i = 0; i < 2; i++) fs::rename(tmp_[i], dst_[i]);
  }

 private:
  void join() {
    if (writer_.joinable()) writer_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }
  fs::path dst_[2];
  std::string tmp_[2];
  std::thread writer_;
  std::exception_ptr error_;
};

// A proof's report as far as it is known.
struct Outcome {
  int32_t status = kOk;
  double prove_ms = 0;
  std::string error;
};

// A proof between its compute and its report: the request, the report as far as it is known, and
// the computed proof.
struct Finishing {
  SlotWork req;
  Outcome done;
  std::string kv;  // its timeline keys
  std::unique_ptr<Computed> proof;
};

// The host side of computed proofs, on threads of their own: the prover thread meanwhile computes
// the next proofs, which the supervisor has already queued (proofs_in_flight), so that the device
// goes from one batch's compute straight to the next. Proofs that wait are taken together: a thread
// takes a run at the queue's front of proofs of one key, which it checks with one batched
// verification, and leaves the rest to the threads that are idle, so that the proofs of one
// device batch are finished side by side. A proof that is alone is taken alone, at once. Destroying
// it finishes what is queued.
class Finisher {
 public:
  // Past a few dozen proofs a batch's check costs nearly the same per proof (its fixed part, two
  // Miller loops and a final exponentiation, is spread thin), while the first proof's report waits
  // for all of them.
  static constexpr size_t kMaxBatch = 64;
  Finisher(size_t threads, std::function<void(std::vector<Finishing>&)> work) : work_(std::move(work)) {
    for (size_t i = 0; i < std::max<size_t>(threads, 1); i++) threads_.emplace_back([this] { loop(); });
  }
  ~Finisher() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void push(Finishing f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(f));
    }
    cv_.notify_one();
  }
  // Work ahead of a proof's compute, taken before any proof waiting to be finished. It must not
  // throw; what is still queued when the finisher stops is dropped.
  void aside(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      idle_++;
      cv_.wait(lock, [&] { return stop_ || !queue_.empty() || !tasks_.empty(); });
      if (!tasks_.empty()) {
        idle_--;
        std::function<void()> task = std::move(tasks_.front());
        tasks_.pop_front();
        lock.unlock();
        task();
        lock.lock();
        continue;
      }
      // This thread's share of what waits: an even part for each idle thread (itself included).
      const size_t share = std::min(kMaxBatch, (queue_.size() + idle_ - 1) / idle_);
      idle_--;
      if (queue_.empty()) return;  // stopping, and nothing is left
      std::vector<Finishing> batch;
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
      while (!queue_.empty() && batch.size() < share && queue_.front().proof->same_key(*batch.front().proof)) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (!queue_.empty()) cv_.notify_one();  // the rest to another idle thread
      lock.unlock();
      work_(batch);
      lock.lock();
    }
  }
  std::function<void(std::vector<Finishing>&)> work_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Finishing> queue_;
  std::deque<std::function<void()>> tasks_;
  size_t idle_ = 0;  // threads waiting for work
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class GpuWorker {
 public:
  GpuWorker(config::Config cfg, WorkerArgs args)
      : cfg_(std::move(cfg)), args_(args), link_(args, cfg_.daemon.heartbeat_interval_ms) {
    device_ = cfg_.gpu.devices.at(args.index);
    if (const char* d = std::getenv("CUZK_TEST_PROVE_DELAY_MS")) delay_ms_ = std::atoi(d);
  }

  ~GpuWorker() {
    stop_prover();
    finisher_.reset();  // it may still read the ring and the keys
    if (registered_) registrar_->unregister_host(seg_->base());
  }

  int run() {
    // Heartbeats start first: loading large keys takes a while and is not a hang.
    link_.start_heartbeat();
    seg_ = Segment::open(args_.ring, device_);
    bo_.device = device_;
    bo_.precompute = cfg_.gpu.precompute;
    bo_.precompute_headroom_mb = cfg_.gpu.precompute_headroom_mb;
    bo_.msm_window = (int)cfg_.gpu.msm_window;
    bo_.ntt_passes = (int)cfg_.gpu.ntt_passes;
    // The ring's backend: the curve of the first circuit (any backend page-locks for every device).
    std::vector<std::unique_ptr<gpuw::CachedKey>> keys;
    std::vector<ZKeyHeader> headers;
    std::vector<size_t> estimates;
    for (size_t i = 0; i < cfg_.circuits.size(); i++) {
      if (cfg_.circuits[i].runtime) break;  // learnt below, once the budget is known
      headers.push_back(read_zkey_header(cfg_.circuits[i].zkey));
      estimates.push_back(key_resident_bytes(headers.back()));
      keys.push_back(make_key(i, headers.back()));
    }
    registrar_ = bls_ ? static_cast<HostRegistrar*>(bls_.get()) : static_cast<HostRegistrar*>(bn_.get());
    // The keys' budget: gpu.key_memory, else the device's memory less the tables' headroom (cpu: none).
    budget_ = cfg_.gpu.key_memory;
    if (!budget_) {
      const size_t total = bls_ ? bls_->memory_bytes() : bn_->memory_bytes();
      const size_t headroom = size_t(cfg_.gpu.precompute_headroom_mb) << 20;
      if (total) budget_ = total > headroom ? total - headroom : total;
    }
    for (size_t i = 0; i < headers.size(); i++)
      if (std::string why = key_over_budget(headers[i], cfg_.circuits[i].name, budget_); !why.empty())
        throw config::ConfigError("gpu.key_memory", why + " on device " + std::to_string(device_));
    keys_ = std::make_unique<gpuw::KeyCache>(std::move(keys), std::move(estimates), budget_, cfg_.gpu.key_host_memory,
                                             [this](const gpuw::KeyEvent& e) { key_event(e); });
    learn_circuits(false);
    if (!keys_->all_fit())
      std::fprintf(stderr,
                   "cuzk-gpu-worker: the keys of the %zu circuits need more than the %zu bytes keys may take on "
                   "device %d (gpu.key_memory): they are loaded when a proof needs them, the least recently used "
                   "giving way, and without precomputed tables\n",
                   keys_->size(), budget_, device_);
    keys_->preload();
    // Pinned ring (cuda): host-to-device copies of a, b, c run at full PCIe speed, straight from the slot.
    if (registrar_) {
      registrar_->register_host(seg_->base(), seg_->size());
      registered_ = true;
    }
    // The finisher's threads: the worker's own, but for the one that drives the device.
    finisher_ = std::make_unique<Finisher>(std::max<size_t>(thread_count(), 2) - 1,
                                           [this](std::vector<Finishing>& b) { finish(b); });
    // key_budget: what a key may take here, for the supervisor's check of circuits added later.
    const Msg hello = Msg::hello(device_, uint32_t(thread_count()), budget_, cfg_.gpu.backend, current_affinity());
    // After a device error the worker exits 1 to restart with a fresh context, once the proofs
    // already computed are finished and reported.
    prover_ = std::thread([this] { prove_loop(); });
    int rc = worker::serve(link_, hello, MsgType::Prove, [this](const Msg& m) { return enqueue(m.body.prove.work); });
    stop_prover();
    finisher_.reset();
    return restart_ ? exit_status::kFailure : rc;
  }

 private:
  // Ends the prover thread once it has proved what is queued (or at once after a device error).
  void stop_prover() {
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      stopping_ = true;
    }
    queue_cv_.notify_one();
    if (prover_.joinable()) prover_.join();
  }

  // Circuit i's key on the backend of its curve, not loaded yet.
  std::unique_ptr<Key> make_key(size_t i, const ZKeyHeader& hdr) {
    return with_curve(hdr.curve, [&]<class C>() -> std::unique_ptr<Key> {
      backend<C>();
      // The evaluator cache the synthesis workers share (<state_dir>/evaluator): mapped, not compiled.
      const std::string evaluators = (fs::path(cfg_.daemon.state_dir) / "evaluator").string();
      return std::make_unique<KeyOn<C>>(cfg_.circuits[i].zkey, cfg_.gpu.backend, bo_, evaluators);
    });
  }

  // The circuits added at run time that this worker does not know yet (config.hpp's runtime file),
  // each with its key, at the supervisor's indices. A key that cannot serve here refuses its
  // proofs instead of stopping the worker, which serves every other circuit. lock: take device_mu_
  // (the finisher reads the circuits and the keys under it).
  void learn_circuits(bool lock) {
    config::Config next = cfg_;
    config::load_runtime_circuits(next);
    if (next.circuits.size() == keys_->size()) return;
    std::unique_lock<std::mutex> held(device_mu_, std::defer_lock);
    if (lock) held.lock();
    for (size_t i = cfg_.circuits.size(); i < next.circuits.size(); i++) cfg_.circuits.push_back(next.circuits[i]);
    for (size_t i = keys_->size(); i < cfg_.circuits.size(); i++) {  // those of the worker's start too
      const std::string name = cfg_.circuits[i].name;
      std::unique_ptr<gpuw::CachedKey> key;
      size_t estimate = 0;
      try {
        const ZKeyHeader hdr = read_zkey_header(cfg_.circuits[i].zkey);
        estimate = key_resident_bytes(hdr);
        if (std::string why = key_over_budget(hdr, name, budget_); !why.empty())
          key = std::make_unique<RefusedKey>(why + " on device " + std::to_string(device_));
        else
          key = make_key(i, hdr);
      } catch (const std::exception& e) {
        key = std::make_unique<RefusedKey>("circuit '" + name + "': its key " + cfg_.circuits[i].zkey +
                                           " cannot be read: " + e.what());
      }
      if (!key->refusal().empty())
        std::fprintf(stderr, "cuzk-gpu-worker: %s; its proofs fail\n", key->refusal().c_str());
      keys_->add(std::move(key), estimate);
    }
  }

  // The main thread's handler of the supervisor's Prove messages: each goes to the prover thread's
  // queue, in the order the supervisor sent them. False once the worker must restart.
  bool enqueue(const SlotWork& req) {
    if (restart_) return false;  // a device error: the slots go back by crash repair
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      pending_.push_back(req);
    }
    queue_cv_.notify_one();
    return true;
  }

  // The prover thread: takes the oldest request with the others of its circuit that are queued, as
  // one batch, until the worker stops (what is queued is proved first) or must restart.
  void prove_loop() {
    for (;;) {
      SlotWork first;
      {
        std::unique_lock<std::mutex> lock(queue_mu_);
        queue_cv_.wait(lock, [&] { return stopping_ || restart_ || !pending_.empty(); });
        if (restart_ || pending_.empty()) return;
        first = pending_.front();
        pending_.pop_front();
      }
      if (!prove_batch(first)) {
        // The device may be unusable: the worker exits 1 once the finisher has finished what is
        // queued. Requests still queued keep their READY slots, which crash repair hands out again.
        restart_ = true;
        link_.stop_receiving();
        return;
      }
    }
  }

  // A request whose slot this worker has taken (READY to PROVING): its report as far as it is known.
  struct Taken {
    SlotWork req;
    Outcome done;
    std::string kv;  // its timeline keys
  };

  void report(const SlotWork& req, const Outcome& o) {
    link_.send(Msg::prove_done(req, o.status, o.prove_ms, o.error));
  }

  // Takes req's slot, or reports why it cannot (not READY for this worker, or cancelled).
  std::optional<Taken> pick_up(const SlotWork& req) {
    const uint64_t t0 = monotonic_ns();
    Taken t{req, {}, {}};
    t.kv = tl::Kv()
               .add(tl::kPartition, req.partition)
               .add(tl::kWorker, "gpu" + std::to_string(args_.index))
               .add(tl::kSlot, req.slot)
               .add(tl::kDevice, device_)
               .str();
    if (!seg_->owned_by(req.slot, link_.owner(), req.job, req.partition) ||
        !seg_->transition(req.slot, SlotState::Ready, SlotState::Proving)) {
      report(req, {kFailed, 0, "slot " + std::to_string(req.slot) + " is not READY for this worker"});
      return std::nullopt;
    }
    const uint64_t synth_end_ns = seg_->slot(req.slot).synth_end_ns;
    link_.event(tl::kGpuPickup, req.job,
                tl::Kv().raw(t.kv).ms(tl::kWaitMs, synth_end_ns ? double(t0 - synth_end_ns) / 1e6 : 0.0).str());
    for (int ms = 0; ms < delay_ms_ && !seg_->cancelled(req.slot); ms += 10)  // test hook: a long proof
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (seg_->cancelled(req.slot)) {
      seg_->transition(req.slot, SlotState::Proving, SlotState::Free);
      report(req, {kCancelled, 0, "cancelled"});
      return std::nullopt;
    }
    return t;
  }

  // A taken request that fails before its compute, alone; returns whether the device is usable.
  bool fail_one(Taken& t, std::exception_ptr e) {
    const bool healthy = failed(t.done, t.req.slot, e);
    report(t.req, t.done);
    return healthy;
  }

  // Proves first's slot with the queued requests of its circuit, up to the key's batch (gpu.batch
  // and the key's own limit), in one pass on the device, and hands each proof to the finisher.
  // Requests of other circuits keep their places; they wait for this batch at most. Returns false
  // after a failure that may have left the device unusable.
  bool prove_batch(const SlotWork& first) {
    std::optional<Taken> t0 = pick_up(first);
    if (!t0) return true;
    std::vector<Taken> batch;
    batch.push_back(std::move(*t0));
    try {
      if (first.circuit >= keys_->size()) learn_circuits(true);
      if (first.circuit >= keys_->size()) throw std::invalid_argument("no circuit " + std::to_string(first.circuit));
    } catch (...) {
      return fail_one(batch.front(), std::current_exception());
    }
    // One compute at a time on the device (the finisher's retries too), from the key's load to the
    // batch's end. A key that is not resident is loaded before the proofs start: on the timeline
    // its load is KEY_LOAD's, not the proofs'.
    std::unique_lock<std::mutex> device_lock(device_mu_);
    Key* key = nullptr;
    try {
      key_for_ = &first;
      struct Clear {  // also when the load throws (a refused key): KEY_LOAD events of later loads name no proof
        const SlotWork*& p;
        ~Clear() { p = nullptr; }
      } clear{key_for_};
      key = &static_cast<Key&>(keys_->use(first.circuit));
      key->check(*seg_, first.slot);
    } catch (...) {
      device_lock.unlock();
      return fail_one(batch.front(), std::current_exception());
    }
    const size_t limit = std::min<size_t>(cfg_.gpu.batch, std::max<size_t>(key->batch_limit(), 1));
    std::vector<SlotWork> more;
    if (limit > 1) {
      std::lock_guard<std::mutex> lock(queue_mu_);
      for (auto it = pending_.begin(); it != pending_.end() && 1 + more.size() < limit;) {
        if (it->circuit == first.circuit) {
          more.push_back(*it);
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
    }
    bool healthy = true;
    for (const SlotWork& m : more) {
      std::optional<Taken> t = pick_up(m);
      if (!t) continue;
      try {
        key->check(*seg_, m.slot);
      } catch (...) {
        healthy = fail_one(*t, std::current_exception()) && healthy;
        continue;
      }
      batch.push_back(std::move(*t));
    }
    const size_t n = batch.size();
    std::vector<uint32_t> slots;
    for (const Taken& t : batch) {
      slots.push_back(t.req.slot);
      link_.event(tl::kGpuStart, t.req.job, tl::Kv().raw(t.kv).add(tl::kBatch, n).str());
    }
    // A proof alone is waited for: its blinding and the public part of its check are prepared on a
    // finisher thread while the device computes it (a batch's proofs are checked together instead).
    std::shared_ptr<Ahead> ahead;
    if (n == 1) {
      try {
        ahead = key->ahead(*seg_, slots.front());
        finisher_->aside([ahead] { ahead->run(); });
      } catch (const std::exception&) {
        // Prepared after the compute then, by the proof's finish (Ahead::wait) or without it.
      }
    }
    const uint64_t start = monotonic_ns();
    std::vector<std::unique_ptr<Computed>> proofs;
    tl::Kv busy;
    try {
      proofs = key->compute(*seg_, slots);
      if (proofs.size() != n) throw std::logic_error("a batch's compute gave another number of proofs");
      if (ahead) proofs.front()->ahead = ahead;
      add_busy(busy, key->last_spans(), n);
      if (auto ht = key->last_host_times())  // host-side wall times of the stages (the batch's)
        busy.ms(tl::kHMs, ht->h_ms).ms(tl::kMsmMs, ht->msm_ms).ms(tl::kUploadMs, ht->upload_ms);
    } catch (...) {
      device_lock.unlock();
      const std::exception_ptr e = std::current_exception();
      for (Taken& t : batch) healthy = fail_one(t, e) && healthy;
      return healthy;
    }
    device_lock.unlock();
    const double prove_ms = double(monotonic_ns() - start) / 1e6;
    // The device is done with these proofs: the next batch may start on it now.
    for (size_t i = 0; i < n; i++) {
      Taken& t = batch[i];
      t.done.prove_ms = prove_ms;
      link_.event(tl::kGpuEnd, t.req.job,
                  tl::Kv().raw(t.kv).ms(tl::kProveMs, prove_ms).add(tl::kBatch, n).raw(busy.str()).str());
      finisher_->push(Finishing{t.req, t.done, t.kv, std::move(proofs[i])});
    }
    return healthy;
  }

  // The compute of req's slot alone on the device (a retry of a proof that did not verify).
  std::unique_ptr<Computed> compute_one(const SlotWork& req) {
    std::lock_guard<std::mutex> lock(device_mu_);  // the prover thread may be adding keys
    if (req.circuit >= keys_->size()) throw std::invalid_argument("no circuit " + std::to_string(req.circuit));
    Key& k = static_cast<Key&>(keys_->use(req.circuit));
    k.check(*seg_, req.slot);
    return std::move(k.compute(*seg_, {req.slot}).front());
  }

  // On a finisher thread: proofs of one key, in order, each assembled, checked and written, its
  // slot freed, its report sent. Results go to files first; a slot is released only after they are
  // complete, so that a crash at any point leaves either the result or the slot to prove again. A
  // result file exists only for a proof that verified (crash repair takes files as a finished
  // proof): the files are written under temporary names while the proofs are checked, and renamed
  // after. The proofs are checked together (groth16::verify_batch: for n proofs n + 2 Miller loops
  // and one final exponentiation instead of 3n and n), on this thread while one writer thread
  // writes every proof's files. A proof the batch does not clear goes the way of a single proof
  // that did not verify: checked alone (which says why a malformed one is refused), then proved
  // again.
  void finish(std::vector<Finishing>& batch) {
    const uint64_t t0 = monotonic_ns();
    const size_t n = batch.size();
    std::vector<std::unique_ptr<ResultFiles>> out(n);
    std::vector<std::exception_ptr> error(n);
    std::vector<const Computed*> assembled;
    std::vector<size_t> at;  // assembled[k] is batch[at[k]]
    for (size_t i = 0; i < n; i++) {
      try {
        const fs::path dir = shm::job_results(cfg_.daemon.state_dir, batch[i].req.job);
        out[i] = std::make_unique<ResultFiles>(shm::public_file(dir, batch[i].req.partition),
                                               shm::proof_file(dir, batch[i].req.partition));
        batch[i].proof->assemble();
        assembled.push_back(batch[i].proof.get());
        at.push_back(i);
      } catch (...) {
        error[i] = std::current_exception();
      }
    }
    std::vector<bool> checked(n, false);
    auto write_all = [&] {
      for (size_t i : at) out[i]->write_now(*batch[i].proof);
    };
    std::thread writer;
    try {
      writer = std::thread(write_all);
    } catch (const std::system_error&) {
      write_all();  // no thread to be had: the files first, then the check
    }
    if (cfg_.gpu.verify && !assembled.empty()) {
      try {
        const std::vector<bool> v = assembled.front()->verify_together(assembled);
        for (size_t k = 0; k < at.size(); k++) checked[at[k]] = v.at(k);
      } catch (...) {
        // Every verdict stays false: each proof is checked alone below, which reports the fault.
      }
    }
    if (writer.joinable()) writer.join();
    for (size_t i = 0; i < n; i++) finish_one(batch[i], out[i].get(), error[i], checked[i], t0);
  }

  // One proof of finish()'s batch after the batch check: checked says the check cleared it.
  void finish_one(Finishing& f, ResultFiles* files, std::exception_ptr error, bool checked, uint64_t t0) {
    const SlotWork& req = f.req;
    Outcome& done = f.done;
    bool healthy = true;
    try {
      if (error) std::rethrow_exception(error);
      ResultFiles& out = *files;
      if (cfg_.gpu.verify && !checked && !out.verified(*f.proof)) {
        // One more proof with fresh randomness: a passing fault does not repeat, while a witness
        // that does not satisfy the circuit fails every time.
        link_.event(tl::kProofUnverified, req.job, f.kv);
        std::unique_ptr<Computed> again = compute_one(req);
        again->assemble();
        out.write(*again);
        if (!out.verified(*again)) throw Unverified(req.circuit);
      }
      out.commit();
      link_.event(tl::kProofWritten, req.job,
                  tl::Kv().raw(f.kv).ms(tl::kFinishMs, double(monotonic_ns() - t0) / 1e6).str());
      seg_->transition(req.slot, SlotState::Proving, SlotState::Free);
      worker::test_crash_point("gpu-freed");
      done.status = kOk;
    } catch (...) {
      healthy = failed(done, req.slot, std::current_exception());
    }
    report(req, done);
    if (!healthy) {
      // The device may be unusable: the worker exits 1 once this thread has finished what is
      // queued, even while its main thread waits for work.
      restart_ = true;
      link_.stop_receiving();
    }
  }

  // KEY_LOAD and KEY_EVICT, with the proof that needed the key when there is one.
  void key_event(const gpuw::KeyEvent& e) {
    tl::Kv kv;
    kv.add(tl::kWorker, "gpu" + std::to_string(args_.index))
        .add(tl::kDevice, device_)
        .add(tl::kCircuit, cfg_.circuits.at(e.key).name)
        .add(tl::kBytes, e.bytes);
    if (e.kind == gpuw::KeyEvent::Load) {
      const gpuw::LoadParts& p = e.parts;
      kv.ms(tl::kLoadMs, e.load_ms)
          .add(tl::kSource, e.from_host ? "host" : "file")
          .ms(tl::kFileMs, p.read_ms)
          .ms(tl::kPrepareMs, p.prepare_ms)
          .ms(tl::kUploadMs, p.upload_ms)
          .add(tl::kUploadBytes, p.upload_bytes)
          .add(tl::kPinnedBytes, p.pinned_bytes)
          .ms(tl::kCheckMs, p.check_ms)
          .ms(tl::kTablesMs, p.tables_ms);
      std::fprintf(stderr,
                   "cuzk-gpu-worker: device %d: key of '%s' loaded from %s in %.0f ms (%zu bytes): file %.0f ms, "
                   "prepare %.0f ms, upload %.0f ms (%.2f GB/s), checks %.0f ms, tables %.0f ms\n",
                   device_, cfg_.circuits.at(e.key).name.c_str(), e.from_host ? "host memory" : "its file", e.load_ms,
                   e.bytes, p.read_ms, p.prepare_ms, p.upload_ms,
                   p.upload_ms > 0 ? double(p.upload_bytes) / p.upload_ms / 1e6 : 0.0, p.check_ms, p.tables_ms);
    } else {
      kv.add(tl::kHost, e.kept_on_host ? "kept" : "dropped").ms(tl::kEvictMs, e.evict_ms);
    }
    const SlotWork* r = key_for_;
    if (r) kv.add(tl::kPartition, r->partition).add(tl::kSlot, r->slot);
    const bool load = e.kind == gpuw::KeyEvent::Load;
    link_.event(load ? tl::kKeyLoad : tl::kKeyEvict, r ? r->job : 0, kv.str());
    // The supervisor's record of what is resident where.
    link_.send(Msg::key(uint32_t(e.key), load, e.bytes, load ? e.load_ms : 0));
  }

  // A proof's failure into its report, and its slot to where the failure leaves it. Returns
  // whether the device is still usable.
  bool failed(Outcome& done, uint32_t slot, std::exception_ptr e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::invalid_argument& e) {
      seg_->transition(slot, SlotState::Proving, SlotState::Free);
      done.status = kBadInput;
      done.error = e.what();
    } catch (const Unverified& e) {
      bool r1cs_checked;
      {
        std::lock_guard<std::mutex> lock(device_mu_);  // the prover thread may be learning circuits
        r1cs_checked = !cfg_.circuits.at(e.circuit).r1cs.empty();
      }
      if (!r1cs_checked) {
        // Nothing checked the constraints: most likely the witness. Proving again would fail again.
        seg_->transition(slot, SlotState::Proving, SlotState::Free);
        done.status = kBadInput;
        done.error =
            "the proof does not verify (twice, with fresh randomness): the witness does not satisfy the circuit, or "
            "the prover is at fault (set the circuit's r1cs to have synthesis check every constraint)";
        return true;
      }
      // Synthesis checked every constraint, so the prover is at fault: retried like a device error.
      seg_->transition(slot, SlotState::Proving, SlotState::Ready);
      done.status = kFailed;
      done.error = "the proof does not verify (twice) although the witness satisfies every constraint: a prover fault";
      return cfg_.gpu.backend == "cpu";
    } catch (const std::exception& e) {
      // The slot goes back to READY: its a, b, c are intact and another attempt proves them again.
      seg_->transition(slot, SlotState::Proving, SlotState::Ready);
      done.status = kFailed;
      done.error = e.what();
      return cfg_.gpu.backend == "cpu";
    }
    return true;
  }

  config::Config cfg_;
  WorkerArgs args_;
  WorkerLink link_;
  int device_ = 0;
  int delay_ms_ = 0;
  // The backend of curve C, made on first use with the [gpu] options.
  template <class C>
  Backend<C>& backend() {
    std::unique_ptr<Backend<C>>* b;
    if constexpr (std::is_same_v<C, Bls12_381>)
      b = &bls_;
    else
      b = &bn_;
    if (!*b) *b = make_backend<C>(cfg_.gpu.backend, bo_);
    return **b;
  }

  bool registered_ = false;
  std::unique_ptr<Segment> seg_;
  BackendOptions bo_;
  std::unique_ptr<Backend<Bls12_381>> bls_;
  std::unique_ptr<Backend<Bn254>> bn_;
  HostRegistrar* registrar_ = nullptr;  // the backend that page-locked the ring
  std::unique_ptr<gpuw::KeyCache> keys_;
  size_t budget_ = 0;                   // what the keys may take where they prove (0: no limit)
  const SlotWork* key_for_ = nullptr;        // the proof whose key is being made resident (under device_mu_)
  std::mutex device_mu_;                // one compute at a time: the finisher's retries, the prover thread's batches
  std::atomic<bool> restart_{false};    // the finisher or the prover thread met a device error
  std::mutex queue_mu_;                 // pending_ and stopping_
  std::condition_variable queue_cv_;
  std::deque<SlotWork> pending_;             // Prove requests not taken yet, in the supervisor's order
  bool stopping_ = false;
  std::thread prover_;                  // prove_loop
  std::unique_ptr<Finisher> finisher_;  // last: stopped before the keys and the ring go
};

}  // namespace

int main(int argc, char** argv) {
  worker::WorkerProgram program;
  program.name = "cuzk-gpu-worker";
  program.placement = [](const config::Config& c) {
    return worker::Placement{c.gpu.devices.size(), "gpu.devices has " + std::to_string(c.gpu.devices.size()) + " entries",
                             &c.gpu.cpus, "gpu.cpus", c.gpu.threads};
  };
  program.run = [](config::Config cfg, const WorkerArgs& args) { return GpuWorker(std::move(cfg), args).run(); };
  return worker::worker_main(argc, argv, program);
}
