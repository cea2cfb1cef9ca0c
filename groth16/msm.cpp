// Pippenger's bucket method on the CPU, with batch-affine bucket accumulation.
//
// For window width c the scalars are recoded into signed digits d in [-2^(c-1), 2^(c-1)]
// (math/msm.hpp), so each window has 2^(c-1) buckets. Per window:
//   1. counting-sort the points by |d| into one contiguous array (negating where d < 0);
//   2. sum every bucket by a pairwise tree: each round adds disjoint pairs inside every bucket,
//      all the pairs of a round sharing one field inversion (Montgomery's trick), so an addition
//      costs about 5M + 1S instead of 8M + 2S for a mixed XYZZ addition;
//   3. sum_j j*B_j by running sums in XYZZ (2 additions per bucket).
// Small MSMs, whose window tasks hold too few points to share an inversion between many pairs,
// add each point into an XYZZ bucket instead (choose_plan weighs the two).
// Windows (and, when windows are few, slices of the points) are independent tasks spread over
// the threads; the window sums are combined by Horner's rule with c doublings per window.
#include "msm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "hugepages.hpp"
#include "math/msm.hpp"
#include "parallel.hpp"
#include "prover.hpp"

namespace cuzk {

// A worker of any curve, so that one thread can hold the worker of whichever MSM it is serving.
struct AnyWorker {
  virtual ~AnyWorker() = default;
};

// One MSM, sum s_i P_i with prepared scalars k (folded) and signs neg, cut into window tasks.
// Jobs of several MSMs run as one pool (run_jobs), so that a thread done with one MSM's tasks
// starts on the next MSM's instead of waiting at a barrier for the other threads' last window.
class MsmJobBase {
 public:
  virtual ~MsmJobBase() = default;
  virtual size_t tasks() const = 0;
  // Runs task t with this thread's worker, replacing it when it belongs to another job.
  virtual void run_task(size_t t, std::unique_ptr<AnyWorker>& worker, const MsmJobBase*& owner) = 0;
  virtual void finish() = 0;  // combines the task sums into the result, after every task ran
};

namespace {

using Scalar = BigInt<4>;

// (r-1)/2: scalars above it are folded to r - s.
template <class FrParams>
Scalar half_r() {
  static_assert(FrParams::N == 4);
  Scalar h;
  for (int i = 0; i < 4; i++) h.l[i] = (FrParams::MOD[i] >> 1) | (i + 1 < 4 ? FrParams::MOD[i + 1] << 63 : 0);
  return h;
}

bool greater(const Scalar& a, const Scalar& b) {
  for (int i = 3; i >= 0; i--)
    if (a.l[i] != b.l[i]) return a.l[i] > b.l[i];
  return false;
}

// The work split chosen for one MSM: window width, number of windows, point slices per window,
// and the form of the buckets: batch-affine (a tree of affine additions sharing inversions) or XYZZ
// (one mixed addition per point, no inversion).
struct Plan {
  int c = 0, windows = 0, slices = 1;
  bool affine = true;
};

// log2 of the group size of the two-level bucket sum for window width c (0: plain running sums,
// for the few buckets of small windows).
int two_level_log(int c) { return c >= 5 ? (c - 1) / 2 : 0; }

// Picks c, the slice count and the bucket form by a cost model in multiplications M of the
// points' field. Batch-affine: an addition is ~7M (3M of the shared inversion, 2M + 1S for the
// sum, the rest in subtractions), the bucket reduction ~26M per bucket with plain running sums
// (one mixed and one full XYZZ addition) or ~14M with the two-level sum (two batch-affine
// additions, plus c-1-h more tree rounds), and each tree round of a task ends with one inversion.
// c and the slices are chosen with the inversion weighted 600M, which the large MSMs' plans were
// measured with. XYZZ: a mixed addition per point (8M + 2S) and two full additions per bucket
// (~28M) for the running sums, without inversions. The chosen batch-affine plan gives way to the
// best XYZZ plan where that is cheaper with the inversion at its measured cost `inv`
// (kInversionCost): where a task has too few points to share the inversions, measured on one
// thread below about 2^8 points on G1 and 2^5 on G2, where the model crosses over too. Tasks run
// ceil(tasks/threads) deep on the threads. A slice never holds more than kMaxSlice points, which
// bounds each thread's bucket buffer (2^19 G2 points = 96 MiB) on keys far beyond a laptop's
// usual sizes.
constexpr size_t kMaxSlice = size_t(1) << 19;

Plan choose_plan(size_t m, int bits, size_t threads, double inv) {
  Plan affine, xyzz{0, 0, 1, false};
  double affine_cost = 0, affine_measured = 0, xyzz_cost = 0;
  size_t q_min = (m + kMaxSlice - 1) / kMaxSlice;
  for (int c = 2; c <= 20; c++) {
    int w = msm_window_count(bits, c);
    for (size_t q = q_min; q <= q_min + 2 * threads; q++) {
      double per_slice = (double)m / q, buckets = (double)(1u << (c - 1));
      double fill = per_slice / buckets;
      int rounds = 1;
      while (fill > 1 && rounds < 40) fill /= 2, rounds++;
      int h = two_level_log(c);
      double depth = (double)((w * q + threads - 1) / threads);
      double tree = 7.0 * per_slice + (h ? 14.0 : 26.0) * buckets, inversions = rounds + (h ? c - 1 - h : 0);
      double cost = depth * (tree + 600.0 * inversions);
      if (affine.c == 0 || cost < affine_cost)
        affine = {c, w, (int)q, true}, affine_cost = cost, affine_measured = depth * (tree + inv * inversions);
      cost = depth * (10.0 * per_slice + 28.0 * buckets);
      if (xyzz.c == 0 || cost < xyzz_cost) xyzz = {c, w, (int)q, false}, xyzz_cost = cost;
    }
  }
  return xyzz_cost < affine_measured ? xyzz : affine;
}

// The cost of the batch inversion's one field inversion, in multiplications of the points' field
// (measured, binary extended Euclid): ~250M in Fq; on G2 the batch inverts norms in Fq (below),
// so one Fq inversion, ~80 multiplications in Fq2.
template <class F>
constexpr double kInversionCost = 250.0;
template <class B, int X>
constexpr double kInversionCost<Fp2<B, X>> = 80.0;

// Inverts n non-zero elements in place with one inversion (Montgomery's trick), running four
// independent product chains side by side: the prefix and suffix passes of the plain trick are
// one long dependency chain of multiplications, so they run at the multiplier's latency rather
// than its throughput. scratch holds n elements. The chain products never meet an add or a compare,
// so they use the lazily reduced multiply, and so may the results: each 1/v[i] comes back in
// [0, 2p), fit only to be multiplied (see Fp::mul_lazy).
template <class F>
void batch_inverse_4way(F* v, size_t n, F* scratch) {
  constexpr size_t L = 4;
  F acc[L];
  for (size_t l = 0; l < L; l++) acc[l] = F::one();
  size_t body = n - n % L;
  for (size_t i = 0; i < body; i += L)
    for (size_t l = 0; l < L; l++) scratch[i + l] = acc[l], acc[l] = acc[l].mul_lazy(v[i + l]);
  for (size_t i = body; i < n; i++) scratch[i] = acc[i - body], acc[i - body] = acc[i - body].mul_lazy(v[i]);
  // Invert the four chain products with one inversion: 1/a0 = a1 a2 a3 / (a0 a1 a2 a3), etc.
  F p01 = acc[0].mul_lazy(acc[1]), p23 = acc[2].mul_lazy(acc[3]);
  F inv_all = (p01 * p23).inv_vartime();  // operator* makes it canonical again
  F inv01 = inv_all.mul_lazy(p23), inv23 = inv_all.mul_lazy(p01);
  F inv[L] = {inv01.mul_lazy(acc[1]), inv01.mul_lazy(acc[0]), inv23.mul_lazy(acc[3]), inv23.mul_lazy(acc[2])};
  for (size_t i = n; i-- > body;) {
    F t = inv[i - body].mul_lazy(scratch[i]);
    inv[i - body] = inv[i - body].mul_lazy(v[i]);
    v[i] = t;
  }
  for (size_t i = body; i > 0;) {
    i -= L;
    for (size_t l = 0; l < L; l++) {
      F t = inv[l].mul_lazy(scratch[i + l]);
      inv[l] = inv[l].mul_lazy(v[i + l]);
      v[i + l] = t;
    }
  }
}

// Fq2 version: 1/a = conj(a)/N(a) with the norm N(a) = a0^2 + a1^2 in the base field, so the
// batch runs on base-field elements: 2S + 3M + 2M per element, against 9M for the generic trick
// over Fq2. scratch (n elements of Fq2) holds the n norms and the n base-field prefixes.
template <class B, int X>
void batch_inverse_4way(Fp2<B, X>* v, size_t n, Fp2<B, X>* scratch) {
  B* norm = reinterpret_cast<B*>(scratch);
  B* prefix = norm + n;
  for (size_t i = 0; i < n; i++) norm[i] = v[i].c0.sqr() + v[i].c1.sqr();
  batch_inverse_4way(norm, n, prefix);
  for (size_t i = 0; i < n; i++) v[i] = {v[i].c0 * norm[i], -(v[i].c1 * norm[i])};
}

// The two large per-worker buffers (digits and the bucket-sorted points, ~100 bytes per point for
// G1, ~200 for G2). They are kept in a pool between MSMs: a proof runs five MSMs one after the
// other, and fresh memory costs page faults and the kernel's page clearing (~1 ms per MB on the
// target VMs). The point buffer is raw storage, so the G1 and G2 MSMs share it (a G2 point is
// exactly two G1 points' bytes). Buffers above kKeepBytes are freed instead, so a long-lived
// process does not hold on to the ~100 MB buffers of very large MSMs.
struct BucketScratch {
  HugeVec<int> digit;
  HugeVec<uint64_t> words;  // the points, as 8-byte words (their alignment)
  template <class C>
  Affine<C>* points() {
    static_assert(sizeof(Affine<C>) % sizeof(uint64_t) == 0 && alignof(Affine<C>) <= alignof(uint64_t));
    return reinterpret_cast<Affine<C>*>(words.data());
  }
};

class ScratchPool {
 public:
  static constexpr size_t kKeepBytes = size_t(32) << 20;
  static std::unique_ptr<BucketScratch> take(size_t entries, size_t point_bytes) {
    std::unique_ptr<BucketScratch> s;
    {
      std::lock_guard<std::mutex> g(mu());
      if (!free().empty()) s = std::move(free().back()), free().pop_back();
    }
    if (!s) s = std::make_unique<BucketScratch>();
    // Grows only; the contents are scratch.
    if (s->digit.size() < entries) grow(s->digit, entries);
    size_t words = entries * (point_bytes / sizeof(uint64_t));
    if (s->words.size() < words) grow(s->words, words);
    return s;
  }
  static void give_back(std::unique_ptr<BucketScratch> s) {
    if (s->words.capacity() * sizeof(uint64_t) > kKeepBytes) return;
    std::lock_guard<std::mutex> g(mu());
    free().push_back(std::move(s));
  }

 private:
  template <class V>
  static void grow(V& v, size_t n) {
    if (v.capacity() >= n) {
      v.resize(n);
      return;
    }
    V().swap(v);
    resize_huge(v, n);
  }
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::vector<std::unique_ptr<BucketScratch>>& free() {
    static std::vector<std::unique_ptr<BucketScratch>> f;
    return f;
  }
};

// One thread's scratch for bucket accumulation; reused across that thread's tasks.
template <class C>
class BucketWorker {
 public:
  using Aff = Affine<C>;
  using F = typename C::F;
  using X = XYZZ<C>;
  static constexpr size_t kBatch = 2048;  // pairs sharing one inversion

  BucketWorker(int c, size_t max_entries)
      : c_(c), nb_(1u << (c - 1)), h_(two_level_log(c)), start_(nb_ + 1), len_(nb_ + 1), cursor_(nb_ + 1),
        scratch_buf_(ScratchPool::take(max_entries, sizeof(Aff))), digit_(scratch_buf_->digit.data()),
        buf_(scratch_buf_->points<C>()) {
    if (h_) {
      size_t lists = (nb_ >> h_) + (1u << h_);
      start2_.resize(lists), len2_.resize(lists), cursor2_.resize(lists);
      buf2_.resize(2 * size_t(nb_));
    }
    src_.reserve(kBatch), dst_.reserve(kBatch), kind_.reserve(kBatch);
    den_.resize(kBatch), scratch_.resize(kBatch);
  }
  ~BucketWorker() { ScratchPool::give_back(std::move(scratch_buf_)); }
  BucketWorker(const BucketWorker&) = delete;
  BucketWorker& operator=(const BucketWorker&) = delete;

  // The window-w sum over act[lo..hi): sum_j d_j(w) * P_j as sum_b b * (bucket b).
  X run(const Aff* pts, const Scalar* k, const uint8_t* neg, const uint32_t* act, size_t lo, size_t hi, int w) {
    std::fill(len_.begin(), len_.end(), 0u);
    for (size_t j = lo; j < hi; j++) {
      uint32_t i = act[j];
      int d = msm_signed_digit(k[i], w, c_);
      if (neg[i]) d = -d;
      digit_[j - lo] = d;
      if (d) len_[std::abs(d)]++;
    }
    uint32_t pos = 0;
    for (uint32_t b = 1; b <= nb_; b++) start_[b] = cursor_[b] = pos, pos += len_[b];
    for (size_t j = lo; j < hi; j++) {
      int d = digit_[j - lo];
      if (!d) continue;
      const Aff& p = pts[act[j]];
      buf_[cursor_[std::abs(d)]++] = d > 0 ? p : -p;
    }
    reduce_lists(buf_, start_.data(), len_.data(), 1, nb_ + 1);
    if (!h_) return weighted_sum(buf_, start_.data() + 1, len_.data() + 1, nb_);
    return weighted_sum_two_level();
  }

 private:
  // sum_{j=1..n} j * S_j for lists holding at most one point each (S_j = list[j-1]), by running
  // sums from the top: one mixed and one full XYZZ addition per list, ~24M.
  X weighted_sum(const Aff* buf, const uint32_t* start, const uint32_t* len, uint32_t n) {
    X running = X::infinity(), total = X::infinity();
    for (uint32_t b = n; b >= 1; b--) {
      if (len[b - 1]) running = running.add_affine(buf[start[b - 1]]);
      if (!running.is_inf()) total += running;
    }
    return total;
  }

  // sum_{j=1..nb} j B_j with j = hi*g + lo (g = 2^h, lo < g):
  //   sum_j j B_j = g * sum_hi hi * G_hi + sum_lo lo * L_lo,
  //   G_hi = sum_lo B_{hi*g+lo} (the buckets of one run of g), L_lo = sum_hi B_{hi*g+lo}.
  // The nb/g + g - 1 sums G and L are independent lists of points, so they are formed with the
  // same batch-affine tree as the buckets (about 2 nb additions at ~7M), leaving running sums over
  // only nb/g + g lists (~24M each) and h doublings: for c = 12 about 31k M per window instead of
  // the 49k M of running sums over all 2048 buckets.
  X weighted_sum_two_level() {
    const uint32_t h = h_, g = 1u << h, ng = nb_ >> h, lists = ng + g - 1;
    // List hi-1 holds G_hi (hi = 1..ng), list ng+lo-1 holds L_lo (lo = 1..g-1); hi = 0 and lo = 0
    // carry weight zero and are left out.
    std::fill(len2_.begin(), len2_.begin() + lists, 0u);
    for (uint32_t j = 1; j <= nb_; j++) {
      if (!len_[j]) continue;
      if (j >> h) len2_[(j >> h) - 1]++;
      if (j & (g - 1)) len2_[ng + (j & (g - 1)) - 1]++;
    }
    uint32_t pos = 0;
    for (uint32_t l = 0; l < lists; l++) start2_[l] = cursor2_[l] = pos, pos += len2_[l];
    for (uint32_t j = 1; j <= nb_; j++) {
      if (!len_[j]) continue;
      const Aff& p = buf_[start_[j]];
      if (j >> h) buf2_[cursor2_[(j >> h) - 1]++] = p;
      if (j & (g - 1)) buf2_[cursor2_[ng + (j & (g - 1)) - 1]++] = p;
    }
    reduce_lists(buf2_.data(), start2_.data(), len2_.data(), 0, lists);
    X high = weighted_sum(buf2_.data(), start2_.data(), len2_.data(), ng);
    for (uint32_t i = 0; i < h; i++) high = high.dbl();
    return high + weighted_sum(buf2_.data(), start2_.data() + ng, len2_.data() + ng, g - 1);
  }

  // Sums each list [start[l], start[l] + len[l]) of buf, l in [first, last), into its first slot,
  // halving every list per round. In a list of L points at s, an odd first point stays at s and
  // pair i (points f+2i, f+2i+1, f = s + (L&1)) lands at f+i: a write never reaches a point that a
  // later pair still has to read, so the rounds work in place.
  void reduce_lists(Aff* buf, uint32_t* start, uint32_t* len, uint32_t first, uint32_t last) {
    for (;;) {
      bool any = false;
      for (uint32_t b = first; b < last; b++) {
        uint32_t L = len[b];
        if (L < 2) continue;
        any = true;
        uint32_t f = start[b] + (L & 1);
        for (uint32_t i = 0; i < L / 2; i++) {
          src_.push_back(f + 2 * i);
          dst_.push_back(f + i);
          if (src_.size() == kBatch) flush(buf);
        }
        len[b] = (L + 1) / 2;
      }
      flush(buf);
      if (!any) return;
    }
  }

  // Adds the queued pairs with one shared inversion. Results are written in queue order, after
  // every slope denominator was read, which the in-place layout above requires.
  void flush(Aff* buf) {
    size_t n = src_.size();
    if (!n) return;
    kind_.resize(n);
    for (size_t t = 0; t < n; t++) {
      const Aff &p = buf[src_[t]], &q = buf[src_[t] + 1];
      kind_[t] = pair_kind(p, q);
      den_[t] = pair_denominator(p, q, kind_[t]);
    }
    batch_inverse_4way(den_.data(), n, scratch_.data());
    for (size_t t = 0; t < n; t++) buf[dst_[t]] = pair_finish(buf[src_[t]], buf[src_[t] + 1], kind_[t], den_[t]);
    src_.clear(), dst_.clear(), kind_.clear();
  }

  int c_;
  uint32_t nb_, h_;  // buckets per window; log2 of the group size of the two-level sum (0: off)
  std::vector<uint32_t> start_, len_, cursor_, start2_, len2_, cursor2_;
  std::unique_ptr<BucketScratch> scratch_buf_;
  int* digit_;  // the pooled buffers, at least max_entries long
  Aff* buf_;
  HugeVec<Aff> buf2_;
  std::vector<uint32_t> src_, dst_;
  std::vector<PairKind> kind_;
  std::vector<F> den_, scratch_;
};

// One thread's buckets in XYZZ form, for the plans whose tasks are too small for batch-affine
// accumulation: every point goes into its bucket by one mixed addition, with no inversion and no
// sorting of the points.
template <class C>
class XyzzBuckets {
 public:
  using Aff = Affine<C>;
  using X = XYZZ<C>;
  explicit XyzzBuckets(int c) : c_(c), buckets_((size_t(1) << (c - 1)) + 1) {}

  // The window-w sum over act[lo..hi): sum_j d_j(w) * P_j as sum_b b * (bucket b).
  X run(const Aff* pts, const Scalar* k, const uint8_t* neg, const uint32_t* act, size_t lo, size_t hi, int w) {
    std::fill(buckets_.begin(), buckets_.end(), X::infinity());
    for (size_t j = lo; j < hi; j++) {
      uint32_t i = act[j];
      int d = msm_signed_digit(k[i], w, c_);
      if (!d) continue;
      if (neg[i]) d = -d;
      X& b = buckets_[std::abs(d)];
      b = b.add_affine(d > 0 ? pts[i] : -pts[i]);
    }
    X running = X::infinity(), total = X::infinity();
    for (size_t b = buckets_.size() - 1; b >= 1; b--) {
      running += buckets_[b];
      if (!running.is_inf()) total += running;
    }
    return total;
  }

 private:
  int c_;
  std::vector<X> buckets_;  // index = |digit|; 0 unused
};

template <class C>
class MsmJob : public MsmJobBase {
 public:
  using X = XYZZ<C>;
  MsmJob(const Affine<C>* pts, const Scalar* k, const uint8_t* neg, size_t n, Jacobian<C>* out)
      : pts_(pts), k_(k), neg_(neg), out_(out) {
    // Only points that contribute: zero scalars and points at infinity drop out here. The bit
    // length histogram estimates each window's share of the entries (witness scalars are mostly
    // small, so high windows hold few), which orders the tasks largest first.
    act_.reserve(n);
    std::vector<size_t> by_bits(257, 0);
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
      if (k[i].is_zero() || pts[i].is_inf()) continue;
      act_.push_back((uint32_t)i);
      int b = k[i].num_bits();
      by_bits[b]++;
      bits = std::max(bits, b);
    }
    size_t m = act_.size();
    if (m <= 4) return;  // finish() does these by double-and-add
    plan_ = choose_plan(m, bits, thread_count(), kInversionCost<typename C::F>);
    std::vector<size_t> reach(plan_.windows, 0);  // scalars with a bit in window w or above
    for (int b = 1; b <= bits; b++)
      for (int w = 0; w < plan_.windows && w * plan_.c <= b; w++) reach[w] += by_bits[b];
    for (int w = 0; w < plan_.windows; w++)
      for (int q = 0; q < plan_.slices; q++) tasks_.push_back({w, m * q / plan_.slices, m * (q + 1) / plan_.slices});
    std::stable_sort(tasks_.begin(), tasks_.end(),
                     [&](const Task& a, const Task& b) { return reach[a.window] > reach[b.window]; });
    max_entries_ = (m + plan_.slices - 1) / plan_.slices;
    sums_.assign(tasks_.size(), X::infinity());
  }

  size_t tasks() const override { return tasks_.size(); }

  void run_task(size_t t, std::unique_ptr<AnyWorker>& worker, const MsmJobBase*& owner) override {
    if (owner != this) {
      worker.reset();  // returns its scratch to the pool before the new worker takes it
      if (plan_.affine)
        worker = std::make_unique<AffineWorker>(plan_.c, max_entries_);
      else
        worker = std::make_unique<XyzzWorker>(plan_.c);
      owner = this;
    }
    const Task& task = tasks_[t];
    if (plan_.affine)
      sums_[t] = static_cast<AffineWorker&>(*worker).run(pts_, k_, neg_, act_.data(), task.lo, task.hi, task.window);
    else
      sums_[t] = static_cast<XyzzWorker&>(*worker).run(pts_, k_, neg_, act_.data(), task.lo, task.hi, task.window);
  }

  void finish() override {
    if (act_.size() <= 4) {  // below the cost of one batch inversion per round: plain double-and-add
      Jacobian<C> acc = Jacobian<C>::infinity();
      for (uint32_t i : act_) {
        Jacobian<C> t = Jacobian<C>::from_affine(pts_[i]).mul(k_[i]);
        acc += neg_[i] ? -t : t;
      }
      *out_ = acc;
      return;
    }
    std::vector<X> window(plan_.windows, X::infinity());
    for (size_t t = 0; t < tasks_.size(); t++) window[tasks_[t].window] += sums_[t];
    X acc = window[plan_.windows - 1];
    for (int w = plan_.windows - 2; w >= 0; w--) {
      for (int i = 0; i < plan_.c; i++) acc = acc.dbl();
      acc += window[w];
    }
    *out_ = acc.to_jacobian();
  }

 private:
  struct AffineWorker : AnyWorker, BucketWorker<C> {
    using BucketWorker<C>::BucketWorker;
  };
  struct XyzzWorker : AnyWorker, XyzzBuckets<C> {
    using XyzzBuckets<C>::XyzzBuckets;
  };
  struct Task {
    int window;
    size_t lo, hi;
  };
  const Affine<C>* pts_;
  const Scalar* k_;
  const uint8_t* neg_;
  Jacobian<C>* out_;
  std::vector<uint32_t> act_;
  Plan plan_;
  std::vector<Task> tasks_;
  size_t max_entries_ = 0;
  std::vector<X> sums_;
};

// Runs every task of every job on the threads, in job order, then finishes each job.
void run_jobs(const std::vector<std::unique_ptr<MsmJobBase>>& jobs) {
  std::vector<std::pair<size_t, size_t>> order;  // (job, task)
  for (size_t j = 0; j < jobs.size(); j++)
    for (size_t t = 0; t < jobs[j]->tasks(); t++) order.push_back({j, t});
  std::atomic<size_t> next{0};
  size_t workers = std::min(thread_count(), order.size());
  if (workers)
    parallel_for(
        workers,
        [&](size_t, size_t, size_t) {
          std::unique_ptr<AnyWorker> worker;
          const MsmJobBase* owner = nullptr;
          for (size_t i; (i = next.fetch_add(1)) < order.size();)
            jobs[order[i].first]->run_task(order[i].second, worker, owner);
        },
        workers);
  for (const auto& j : jobs) j->finish();
}

template <class C>
Jacobian<C> msm_run(const Affine<C>* pts, const Scalar* k, const uint8_t* neg, size_t n) {
  Jacobian<C> out;
  std::vector<std::unique_ptr<MsmJobBase>> jobs;
  jobs.push_back(std::make_unique<MsmJob<C>>(pts, k, neg, n, &out));
  run_jobs(jobs);
  return out;
}

}  // namespace

template <class F>
MsmScalars MsmScalars::prepare(const F* s, size_t n) {
  using FrParams = typename F::Params;
  MsmScalars out;
  resize_huge(out.k, n);
  resize_huge(out.neg, n);
  Scalar half = half_r<FrParams>();
  parallel_for_light(n, [&](size_t b, size_t e, size_t) {
    for (size_t i = b; i < e; i++) {
      Scalar v = s[i].to_plain();
      out.neg[i] = greater(v, half);
      if (out.neg[i]) {  // r - v, which is <= (r-1)/2
        u64 br = 0;
        for (int j = 0; j < 4; j++) v.l[j] = sbb(FrParams::MOD[j], v.l[j], br);
      }
      out.k[i] = v;
    }
  });
  return out;
}

template <class PC>
Jacobian<PC> msm(const Affine<PC>* points, const MsmScalars& s, size_t offset, size_t n) {
  return msm_run(points, s.k.data() + offset, s.neg.data() + offset, n);
}

template <class PC>
void MsmBatch::add(const Affine<PC>* points, const MsmScalars& s, size_t offset, size_t n, Jacobian<PC>* out) {
  jobs_.push_back(std::make_unique<MsmJob<PC>>(points, s.k.data() + offset, s.neg.data() + offset, n, out));
}
void MsmBatch::run() {
  run_jobs(jobs_);
  jobs_.clear();
}
MsmBatch::MsmBatch() = default;
MsmBatch::~MsmBatch() = default;

template <class PC, class F>
Jacobian<PC> msm(const Affine<PC>* points, const F* scalars, size_t n) {
  return msm(points, MsmScalars::prepare(scalars, n), 0, n);
}

#define CUZK_CPU_MSM(C)                                                                                   \
  template MsmScalars MsmScalars::prepare<C::Fr>(const C::Fr*, size_t);                                   \
  template C::G1 msm<C::G1Curve>(const C::G1Affine*, const MsmScalars&, size_t, size_t);                  \
  template C::G2 msm<C::G2Curve>(const C::G2Affine*, const MsmScalars&, size_t, size_t);                  \
  template C::G1 msm<C::G1Curve, C::Fr>(const C::G1Affine*, const C::Fr*, size_t);                        \
  template C::G2 msm<C::G2Curve, C::Fr>(const C::G2Affine*, const C::Fr*, size_t);                        \
  template void MsmBatch::add<C::G1Curve>(const C::G1Affine*, const MsmScalars&, size_t, size_t, C::G1*); \
  template void MsmBatch::add<C::G2Curve>(const C::G2Affine*, const MsmScalars&, size_t, size_t, C::G2*);
CUZK_CPU_MSM(Bls12_381)
CUZK_CPU_MSM(Bn254)
#undef CUZK_CPU_MSM

}  // namespace cuzk
