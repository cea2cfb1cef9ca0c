// The backends by name.
#include "backend/backend.hpp"

#include <stdexcept>

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

template std::unique_ptr<Backend<Bls12_381>> make_backend<Bls12_381>(const std::string&, const BackendOptions&);
template std::unique_ptr<Backend<Bn254>> make_backend<Bn254>(const std::string&, const BackendOptions&);

}  // namespace cuzk
