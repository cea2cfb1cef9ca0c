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

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& opt) {
  if (name == "auto") return make_backend(cuda_device_count() > opt.device ? "cuda" : "cpu", opt);
  if (name == "cpu") return make_cpu_backend();
  if (name == "cuda") return make_cuda_backend(opt);
  std::string known;
  for (const std::string& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown backend '" + name + "' (this build has: " + known + ")");
}

std::unique_ptr<ProverBackend> make_prover(const std::string& name, std::shared_ptr<const ZKey> zk,
                                           const BackendOptions& opt) {
  return make_backend(name, opt)->prover(std::move(zk));
}

}  // namespace cuzk
