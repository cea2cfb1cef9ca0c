// The backends by name.
#include "backend/backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cuda/cuda_backend.hpp"

namespace cuzk {

std::vector<std::string> backend_names() {
  std::vector<std::string> v = {"cpu"};
  if (cuda_backend_built()) v.push_back("cuda");
  return v;
}

template <class C>
std::unique_ptr<Backend<C>> make_backend(const std::string& name, const BackendOptions& opt) {
  if (name == "auto") return make_backend<C>(cuda_device_count() > opt.device ? "cuda" : "cpu", opt);
  if (name == "cpu") return make_cpu_backend<C>();
  if (name == "cuda") return make_cuda_backend<C>(opt);
  std::string known;
  for (const std::string& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown backend '" + name + "' (this build has: " + known + ")");
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Page-locked ranges, unlocked in reverse order when the image's last holder lets go.
struct Pins {
  std::vector<void*> ranges;
  std::function<void(void*)> unlock;
  ~Pins() {
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) unlock(*it);
  }
};

}  // namespace

template <class C>
std::shared_ptr<KeyImage<C>> compile_key_image(std::shared_ptr<const groth16::ZKey<C>> zk,
                                               std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev) {
  if (!zk) throw std::invalid_argument("no proving key to prepare");
  groth16::check_proving_key(*zk);
  auto image = std::make_shared<KeyImage<C>>();
  const auto t0 = std::chrono::steady_clock::now();
  if (!ev) {
    ev = std::make_shared<const groth16::ConstraintEvaluator<C>>(groth16::ConstraintEvaluator<C>::compile(*zk));
    image->evaluator_ms = ms_since(t0);
  } else if (ev->n_rows != zk->domain_size || ev->n_vars != zk->n_vars) {
    throw std::invalid_argument("the constraint evaluator (" + std::to_string(ev->n_rows) + " rows, " +
                                std::to_string(ev->n_vars) + " signals) does not belong to the zkey (domainSize=" +
                                std::to_string(zk->domain_size) + ", nVars=" + std::to_string(zk->n_vars) + ")");
  }
  image->ev = std::move(ev);
  image->zk = std::move(zk);
  return image;
}

template <class C>
std::shared_ptr<const KeyImage<C>> Backend<C>::prepare(std::shared_ptr<const groth16::ZKey<C>> zk, bool,
                                                       std::shared_ptr<const groth16::ConstraintEvaluator<C>> ev) {
  return compile_key_image<C>(std::move(zk), std::move(ev));  // nothing is copied anywhere, nothing to lock
}

template <class C>
void pin_key_image(KeyImage<C>& image, const std::function<void(void*, size_t)>& lock,
                   std::function<void(void*)> unlock) {
  constexpr size_t kMin = size_t(1) << 20;
  const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  std::vector<std::pair<uintptr_t, uintptr_t>> r;
  auto add = [&](const void* p, size_t bytes) {
    if (!p || bytes < kMin) return;
    const uintptr_t b = uintptr_t(p) & ~(page - 1), e = (uintptr_t(p) + bytes + page - 1) & ~(page - 1);
    r.emplace_back(b, e);
  };
  const groth16::ZKey<C>& zk = *image.zk;
  add(zk.a.data(), zk.a.size() * sizeof(zk.a[0]));
  add(zk.b1.data(), zk.b1.size() * sizeof(zk.b1[0]));
  add(zk.b2.data(), zk.b2.size() * sizeof(zk.b2[0]));
  add(zk.c.data(), zk.c.size() * sizeof(zk.c[0]));
  add(zk.h.data(), zk.h.size() * sizeof(zk.h[0]));
  if (const groth16::ConstraintEvaluator<C>* ev = image.ev.get()) {
    add(ev->a_row_ptr.data(), ev->a_row_ptr.size_bytes());
    add(ev->b_row_ptr.data(), ev->b_row_ptr.size_bytes());
    add(ev->a_col.data(), ev->a_col.size_bytes());
    add(ev->b_col.data(), ev->b_col.size_bytes());
    add(ev->a_val.data(), ev->a_val.size_bytes());
    add(ev->b_val.data(), ev->b_val.size_bytes());
  }
  std::sort(r.begin(), r.end());
  std::vector<std::pair<uintptr_t, uintptr_t>> merged;
  for (const auto& x : r)
    if (!merged.empty() && x.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, x.second);
    else
      merged.push_back(x);
  auto pins = std::make_shared<Pins>();
  pins->unlock = std::move(unlock);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& [b, e] : merged) {
    try {
      lock(reinterpret_cast<void*>(b), e - b);
    } catch (const std::exception&) {
      continue;  // left pageable: the load stages it
    }
    pins->ranges.push_back(reinterpret_cast<void*>(b));
    image.pinned_bytes += e - b;
  }
  image.pin_ms = ms_since(t0);
  image.pins = std::move(pins);
}

template std::unique_ptr<Backend<Bls12_381>> make_backend<Bls12_381>(const std::string&, const BackendOptions&);
template std::unique_ptr<Backend<Bn254>> make_backend<Bn254>(const std::string&, const BackendOptions&);
template std::shared_ptr<KeyImage<Bls12_381>> compile_key_image<Bls12_381>(
    std::shared_ptr<const groth16::ZKey<Bls12_381>>, std::shared_ptr<const groth16::ConstraintEvaluator<Bls12_381>>);
template std::shared_ptr<KeyImage<Bn254>> compile_key_image<Bn254>(
    std::shared_ptr<const groth16::ZKey<Bn254>>, std::shared_ptr<const groth16::ConstraintEvaluator<Bn254>>);
template class Backend<Bls12_381>;
template class Backend<Bn254>;
template void pin_key_image<Bls12_381>(KeyImage<Bls12_381>&, const std::function<void(void*, size_t)>&,
                                       std::function<void(void*)>);
template void pin_key_image<Bn254>(KeyImage<Bn254>&, const std::function<void(void*, size_t)>&,
                                   std::function<void(void*)>);

}  // namespace cuzk
