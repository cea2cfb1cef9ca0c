// cuzk_gpu_bench: the GPU benchmarks as a standalone program (the driver lives in kernels/gpu_bench.cpp).
#include <string>
#include <vector>

#include "kernels/gpu_api.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return cuzk::gpu::bench_main(args);
}
