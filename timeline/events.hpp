// The timeline's vocabulary (docs/API.md, "Timeline log"): every event name and key that the
// supervisor and the workers write and that `cuzk waterfall` / `cuzk timeline export` read, plus a
// small builder for the "k=v,k=v" part of a line.
#pragma once
#include <cstdio>
#include <string>
#include <type_traits>

namespace cuzk::tl {

// ---- events ----
inline constexpr char kDaemonStart[] = "DAEMON_START";      // pid, instance, unix_ms
inline constexpr char kDaemonStop[] = "DAEMON_STOP";
inline constexpr char kWorkerStart[] = "WORKER_START";      // worker, kind, pid, epoch, [device]
inline constexpr char kWorkerReady[] = "WORKER_READY";      // worker, kind, pid, epoch, startup_ms, [device]
inline constexpr char kWorkerExit[] = "WORKER_EXIT";        // worker, pid, status, signal, [partition, slot], kind, device, [tasks]
inline constexpr char kWorkerFailed[] = "WORKER_FAILED";    // worker, restarts
inline constexpr char kHeartbeatMissed[] = "HEARTBEAT_MISSED";  // worker, pid
inline constexpr char kJobSubmit[] = "JOB_SUBMIT";          // partitions, priority, circuit, input
inline constexpr char kJobRecovered[] = "JOB_RECOVERED";    // partitions (left to prove), priority, circuit
inline constexpr char kSynthStart[] = "SYNTH_START";        // partition, worker, slot, device
inline constexpr char kSynthEnd[] = "SYNTH_END";            // ... synth_ms, witness_ms, eval_ms, source, status
inline constexpr char kSlotWait[] = "SLOT_WAIT";            // worker, wait_ms, [partition, slot, device]
inline constexpr char kSlotReady[] = "SLOT_READY";          // partition, worker, slot, device
inline constexpr char kGpuPickup[] = "GPU_PICKUP";          // ... wait_ms
inline constexpr char kGpuStart[] = "GPU_START";
inline constexpr char kGpuEnd[] = "GPU_END";                // ... prove_ms, kernel_ms, kernel_<stage>_ms, ...: the device is done
inline constexpr char kProofWritten[] = "PROOF_WRITTEN";    // ... finish_ms: assembled, checked, its files in place
inline constexpr char kProofUnverified[] = "PROOF_UNVERIFIED";  // a proof failed gpu.verify and is made once more
inline constexpr char kKeyLoad[] = "KEY_LOAD";              // worker, device, circuit, bytes, load_ms, source (file | host)
inline constexpr char kKeyEvict[] = "KEY_EVICT";            // worker, device, circuit, bytes, host (kept | dropped)
inline constexpr char kCircuitAdd[] = "CIRCUIT_ADD";        // circuit, index: served from now (added at run time)
inline constexpr char kCircuitRemove[] = "CIRCUIT_REMOVE";  // circuit, index: takes no new jobs
inline constexpr char kProofDone[] = "PROOF_DONE";          // partition, total_ms
inline constexpr char kPartitionFailed[] = "PARTITION_FAILED";  // partition, reason
inline constexpr char kJobDone[] = "JOB_DONE";              // state
// A shared store ([store] url): this node's hold on partitions of the one queue.
inline constexpr char kPartitionClaimed[] = "PARTITION_CLAIMED";  // partition, epoch, taken_over
inline constexpr char kLeaseLost[] = "LEASE_LOST";                // partition, epoch
inline constexpr char kReportRejected[] = "REPORT_REJECTED";      // partition, epoch, state

// ---- keys ----
inline constexpr char kWorker[] = "worker";          // synth<i>, gpu<i>
inline constexpr char kKind[] = "kind";              // synth | gpu
inline constexpr char kDevice[] = "device";
inline constexpr char kPartition[] = "partition";
inline constexpr char kSlot[] = "slot";
inline constexpr char kPid[] = "pid";
inline constexpr char kEpoch[] = "epoch";
inline constexpr char kInstance[] = "instance";
inline constexpr char kUnixMs[] = "unix_ms";         // wall clock of DAEMON_START, to lay several runs of one log end to end
inline constexpr char kStatus[] = "status";
inline constexpr char kSignal[] = "signal";
inline constexpr char kRestarts[] = "restarts";
inline constexpr char kPartitions[] = "partitions";
inline constexpr char kPriority[] = "priority";
inline constexpr char kCircuit[] = "circuit";
inline constexpr char kInput[] = "input";            // JOB_SUBMIT: what the job brings, wtns | inputs
inline constexpr char kStartupMs[] = "startup_ms";   // WORKER_START -> WORKER_READY (a GPU worker loads its keys)
inline constexpr char kSynthMs[] = "synth_ms";
inline constexpr char kWitnessMs[] = "witness_ms";   // obtaining the witness: the generator, or reading a .wtns
inline constexpr char kWitnessMsOld[] = "read_ms";   // the same, in logs from before witness_ms
inline constexpr char kEvalMs[] = "eval_ms";         // evaluating a, b, c
inline constexpr char kSource[] = "source";          // inputs | wtns
inline constexpr char kWitnessEngine[] = "witness_engine";  // SYNTH_END from inputs: program | native | fallback
inline constexpr char kWitnessNote[] = "witness_note";      // SYNTH_END: why the native generator ran (fallback)
inline constexpr char kWitnessPath[] = "witness_path";      // SYNTH_END, program: which of the circuit's paths
inline constexpr char kWitnessTrace[] = "witness_trace";    // SYNTH_END, fallback: 1 where the input is traced as a path
inline constexpr char kWaitMs[] = "wait_ms";
inline constexpr char kProveMs[] = "prove_ms";
inline constexpr char kKernelMs[] = "kernel_ms";     // union of the device's busy spans for the proof (its share of its batch's)
inline constexpr char kBatch[] = "batch";            // GPU_START, GPU_END: proofs computed together in one pass
inline constexpr char kFinishMs[] = "finish_ms";     // PROOF_WRITTEN: the host side of a proof (assembly, gpu.verify, the result files)
inline constexpr char kHMs[] = "h_ms";
inline constexpr char kMsmMs[] = "msm_ms";
inline constexpr char kUploadMs[] = "upload_ms";
inline constexpr char kTotalMs[] = "total_ms";
inline constexpr char kReason[] = "reason";
inline constexpr char kState[] = "state";
inline constexpr char kTasks[] = "tasks";            // WORKER_EXIT: the partitions a GPU worker held, when more than one
inline constexpr char kBytes[] = "bytes";            // KEY_LOAD, KEY_EVICT: the key's memory where it proves
inline constexpr char kLoadMs[] = "load_ms";         // KEY_LOAD: from the need to the key resident (file read or upload)
// KEY_LOAD's parts: the file read (and checked, unless the device checks the points), the image
// prepared (matrices mapped or compiled, arrays page-locked), the copy to the device (upload_ms,
// upload_bytes), the points' checks there and the tables built there.
inline constexpr char kFileMs[] = "file_ms";
inline constexpr char kPrepareMs[] = "prepare_ms";
inline constexpr char kCheckMs[] = "check_ms";
inline constexpr char kTablesMs[] = "tables_ms";
inline constexpr char kUploadBytes[] = "upload_bytes";
inline constexpr char kPinnedBytes[] = "pinned_bytes";  // KEY_LOAD: the key's host copy page-locked for loads
inline constexpr char kEvictMs[] = "evict_ms";       // KEY_EVICT: giving the device memory back
inline constexpr char kHost[] = "host";              // KEY_EVICT: kept | dropped, the key's parsed copy in host memory
inline constexpr char kIndex[] = "index";            // CIRCUIT_ADD, CIRCUIT_REMOVE: the circuit's index in the workers' list
inline constexpr char kTakenOver[] = "taken_over";   // PARTITION_CLAIMED: 1 when another node's lease had expired

// GPU_END's per-stage busy time: "kernel_" + stage + "_ms" (stages of a proof from a slot: copy,
// ntt, msm_plan, msm_a, msm_b1, msm_b2, msm_c, msm_h on the cuda backend; copy, ntt, msm on the cpu
// one; a backend that evaluates a, b, c itself adds eval).
inline std::string kernel_stage_key(const std::string& stage) { return "kernel_" + stage + "_ms"; }

// Values of kind= and source=.
inline constexpr char kKindSynth[] = "synth";
inline constexpr char kKindGpu[] = "gpu";
inline constexpr char kSourceInputs[] = "inputs";
inline constexpr char kSourceWtns[] = "wtns";
inline constexpr char kEngineProgram[] = "program";
inline constexpr char kEngineNative[] = "native";
inline constexpr char kEngineFallback[] = "fallback";  // the program refused the input: native generator

// Builds "k=v,k=v". Values never hold the separators: commas, spaces and line breaks become '_'.
class Kv {
 public:
  Kv& add(const std::string& key, const std::string& value) {
    sep();
    s_ += key;
    s_ += '=';
    for (char c : value) s_ += (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t') ? '_' : c;
    return *this;
  }
  Kv& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
  Kv& add(const std::string& key, T value) {
    return add(key, std::to_string(value));
  }
  // Milliseconds with three decimals (microseconds), as every *_ms key is written.
  Kv& ms(const std::string& key, double value) {
    char b[48];
    std::snprintf(b, sizeof b, "%.3f", value);
    return add(key, b);
  }
  // Appends another list ("k=v,..." without a leading comma).
  Kv& raw(const std::string& kv) {
    if (!kv.empty()) sep(), s_ += kv;
    return *this;
  }
  const std::string& str() const { return s_; }

 private:
  void sep() {
    if (!s_.empty()) s_ += ',';
  }
  std::string s_;
};

}  // namespace cuzk::tl
