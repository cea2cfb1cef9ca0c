// cuzk's driver for a circom C++ witness generator. It is not compiled with cuzk: `cuzk witness build`
// (and the daemon, on first use) compiles it together with circom's `--c` output into the artefact's
// `generator` executable, with circom's own main() renamed so that its circuit loader can be reused.
//
//   generator --describe <circuit.dat>        prints the circuit's sizes and input table as JSON
//   generator --serve <circuit.dat> <ppid>    serves witness requests on fd 3 until EOF
//
// Every request runs in a forked child (cuzk_serve.hpp): a failed assert (abort), a crash or an endless
// loop in the generated code ends that child only, and this process reports what happened.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "calcwit.hpp"
#include "circom.hpp"
#include "cuzk_driver_io.hpp"
#include "cuzk_serve.hpp"
#include "fr.hpp"

Circom_Circuit* loadCircuit(std::string const& datFileName);  // circom's main.cpp

namespace {

using cuzk_driver::Slot;
using cuzk_driver::input_slots;

int describe(const char* dat) {
  Circom_Circuit* c = loadCircuit(dat);
  std::printf("{\"driver\":1,\"n_witness\":%u,\"n_signals\":%u,\"input_start\":%u,\"n_inputs\":%u,\"prime\":[",
              get_size_of_witness(), get_total_signal_no(), get_main_input_signal_start(), get_main_input_signal_no());
  for (int i = 0; i < Fr_N64; i++) std::printf("%s\"%016" PRIx64 "\"", i ? "," : "", uint64_t(Fr_q.longVal[i]));
  std::printf("],\"limbs\":%d,\"inputs\":[", Fr_N64);
  bool first = true;
  for (uint i = 0; i < get_size_of_input_hashmap(); i++) {
    const HashSignalInfo& h = c->InputHashMap[i];
    if (h.signalsize == 0) continue;
    std::printf("%s{\"hash\":\"%016" PRIx64 "\",\"signal\":%" PRIu64 ",\"size\":%" PRIu64 "}", first ? "" : ",",
                uint64_t(h.hash), uint64_t(h.signalid), uint64_t(h.signalsize));
    first = false;
  }
  std::printf("]}\n");
  return 0;
}

// The child: computes one witness and writes it into dest. Returns on success; the generated code
// aborts on a failed assert, and any other failure exits non-zero with a line on stderr.
void compute(Circom_Circuit* circuit, const std::vector<Slot>& slots, const std::vector<uint64_t>& in,
             const std::string& dest, uint64_t offset, uint64_t n_witness) {
  Circom_CalcWit* ctx = new Circom_CalcWit(circuit);
  if (slots.empty()) ctx->tryRunCircuit();
  for (size_t k = 0; k < slots.size(); k++) {
    FrElement v;
    v.shortVal = 0;
    v.type = Fr_LONG;
    std::memcpy(v.longVal, &in[k * Fr_N64], sizeof(v.longVal));
    ctx->setInputSignal(slots[k].hash, slots[k].index, v);
  }
  if (ctx->getRemaingInputsToBeSet() != 0) {
    std::fprintf(stderr, "cuzk-driver: %u inputs were not set\n", ctx->getRemaingInputsToBeSet());
    _exit(3);
  }
  uint8_t* out = cuzk_driver::map_destination(dest, offset, n_witness, Fr_N64 * 8);
  for (uint64_t i = 0; i < n_witness; i++) {
    FrElement v;
    ctx->getWitness(uint(i), &v);
    Fr_toLongNormal(&v, &v);
    std::memcpy(out + i * Fr_N64 * 8, v.longVal, Fr_N64 * 8);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--describe") == 0) return describe(argv[2]);
  if (argc == 4 && std::strcmp(argv[1], "--serve") == 0) {
    if (!cuzk_driver::serving_parent(argv[3])) return 1;
    Circom_Circuit* circuit = loadCircuit(argv[2]);
    const std::vector<Slot> slots = input_slots(circuit);
    return cuzk_driver::serve(slots.size(), [&](const std::vector<uint64_t>& in, const std::string& dest,
                                                uint64_t offset, uint64_t n_witness) {
      compute(circuit, slots, in, dest, offset, n_witness);
    });
  }
  std::fprintf(stderr, "usage: %s --describe <circuit.dat> | --serve <circuit.dat> <parent pid>\n", argv[0]);
  return 2;
}
