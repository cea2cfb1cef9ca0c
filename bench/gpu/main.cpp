// cuzk-bench: the GPU benchmarks as a program of their own (`cuzk bench` runs it).
#include <string>
#include <vector>

#include "bench/gpu/gpu_bench.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return cuzk::gpu::bench_main(args);
}
