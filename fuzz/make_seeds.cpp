// Writes seed inputs made with the product's own writers into <out>/<target>/: a one-constraint
// circuit and a 13-constraint benchmark circuit, each as .r1cs (with and without wire labels), its
// dev-setup .zkey (in `zkey new`'s section order and in 1..10), its witness and verification key, and
// one control message of each type. Usage: fuzz_make_seeds <out>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "groth16/formats.hpp"
#include "groth16/setup.hpp"
#include "shm/messages.hpp"

using namespace cuzk;
using namespace cuzk::bls12_381;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds <out>\n";
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* t : {"zkey", "wtns", "r1cs", "verify_json", "msg"}) fs::create_directories(out / t);

  // c = a * b with one public output: wires 1 (out), 2, 3.
  R1cs tiny;
  tiny.n_wires = 4, tiny.n_pub_out = 1, tiny.n_prv_in = 2, tiny.n_labels = 4;
  tiny.constraints = {Constraint{{{2, Fr::one()}}, {{3, Fr::one()}}, {{1, Fr::one()}}}};
  std::vector<Fr> tiny_w = {Fr::one(), Fr::from_u64(42), Fr::from_u64(6), Fr::from_u64(7)};
  R1cs bench;
  std::vector<Fr> bench_w;
  gen_circuit(4, 1, bench, bench_w);

  int k = 0;
  for (auto [r1cs, w] : {std::pair{tiny, tiny_w}, std::pair{bench, bench_w}}) {
    const std::string s = std::to_string(k++);
    write_r1cs((out / "r1cs" / (s + ".r1cs")).string(), r1cs);
    r1cs.wire_labels.resize(r1cs.n_wires);
    for (uint32_t i = 0; i < r1cs.n_wires; i++) r1cs.wire_labels[i] = i;
    write_r1cs((out / "r1cs" / (s + "_labels.r1cs")).string(), r1cs);
    write_wtns((out / "wtns" / (s + ".wtns")).string(), w);
    ZKey zk = setup_zkey(r1cs, toxic_from_seed("fuzz seeds"));
    write_zkey((out / "zkey" / (s + ".zkey")).string(), zk);
    zk.section_order = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    write_zkey((out / "zkey" / (s + "_ordered.zkey")).string(), zk);
    write_vk_json((out / "verify_json" / (s + "_vk.json")).string(), vk_from_zkey(zk));
    write_public_json((out / "verify_json" / (s + "_public.json")).string(), {w[1]});
  }

  const shm::SlotWork work{3, 1, 1, 0, 0};
  const shm::Msg msgs[] = {
      shm::Msg::hello(0, 4, 1ull << 34, "cuda", "0-3"),
      shm::Msg(shm::MsgType::Heartbeat),
      shm::Msg::synthesize(work, false, "/var/lib/cuzk/uploads/1-1/0.wtns"),
      shm::Msg::synth_done(work, shm::kOk, shm::WitnessEngine::Program, 12.5, 10, 2.5, ""),
      shm::Msg::prove(work),
      shm::Msg::prove_done(work, shm::kFailed, 40, "device error"),
      shm::Msg::event(3, "SYNTH_END", "partition=1,worker=synth0,synth_ms=12.5,source=wtns,status=0"),
      shm::Msg(shm::MsgType::Shutdown),
      shm::Msg::key(0, true, 1ull << 30, 3500),
  };
  for (shm::Msg m : msgs) {
    m.worker = 1, m.epoch = 2, m.t_ns = 123456789;
    std::ofstream((out / "msg" / ("type" + std::to_string(m.type))).string(), std::ios::binary)
        .write(reinterpret_cast<const char*>(&m), sizeof m);
  }
  return 0;
}
