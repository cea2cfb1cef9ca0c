#include "supervisor/queue.hpp"

#include "supervisor/circuits.hpp"
#include "supervisor/helpers.hpp"
#include "supervisor/intake/request_key.hpp"

namespace cuzk::sup {

std::function<const SubmitValidator&()> validator_of(const Circuits& circuits) {
  return [&circuits]() -> const SubmitValidator& { return circuits.validator(); };
}

JobRec job_record(const SubmitRequest& sr, const std::string& circuit, const std::string& submitter) {
  JobRec rec;
  rec.circuit = circuit;
  rec.priority = sr.priority;
  rec.request_id = sr.request_id;
  rec.request_digest = sr.request_digest;
  rec.input = sr.kind;
  rec.submitter = submitter;
  rec.created_ms = wall_ms();
  return rec;
}

nlohmann::ordered_json job_json(const JobRec& j) {
  using ojson = nlohmann::ordered_json;
  ojson parts = ojson::array();
  for (const auto& p : j.parts) {
    ojson pj = {{"index", p.index},
                {"state", to_string(p.state)},
                {"attempts", p.attempts},
                {"error", p.error.empty() ? ojson(nullptr) : ojson(p.error)}};
    if (!p.timings.empty()) {
      try {
        pj["timings"] = ojson::parse(p.timings);
      } catch (...) {
      }
    }
    if (p.state == PState::Done) {
      try {
        pj["proof"] = ojson::parse(p.proof);
        pj["public"] = ojson::parse(p.pub);
      } catch (const std::exception& e) {
        pj["error"] = std::string("stored result unreadable: ") + e.what();
      }
    }
    parts.push_back(std::move(pj));
  }
  return ojson{{"id", std::to_string(j.id)},
               {"circuit", j.circuit},
               {"priority", to_string(j.priority)},
               {"input_kind", to_string(j.input)},
               {"request_id", j.request_id.empty() ? ojson(nullptr) : ojson(request_id_of(j.request_id))},
               {"state", to_string(j.state)},
               {"error", j.error.empty() ? ojson(nullptr) : ojson(j.error)},
               {"created_ms", j.created_ms},
               {"finished_ms", j.finished_ms ? ojson(j.finished_ms) : ojson(nullptr)},
               {"partitions", parts}};
}

std::string counts_metrics(const JobStore::Counts& c) {
  std::string out =
      "# HELP cuzk_jobs_total Jobs in the store by state.\n"
      "# TYPE cuzk_jobs_total gauge\n";
  for (size_t s = 0; s < kJStates; s++)
    out += std::string("cuzk_jobs_total{state=\"") + to_string(JState(s)) + "\"} " + std::to_string(c.jobs[s]) + "\n";
  out +=
      "# HELP cuzk_partitions_total Partitions in the store by state.\n"
      "# TYPE cuzk_partitions_total gauge\n";
  for (size_t s = 0; s < kPStates; s++)
    out += std::string("cuzk_partitions_total{state=\"") + to_string(PState(s)) + "\"} " + std::to_string(c.parts[s]) +
           "\n";
  return out;
}

std::string store_metrics(const StoreMetrics& m) {
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
           std::to_string(v) + "\n";
  };
  metric("cuzk_store_up", "gauge", "1 when the job store answered its last call.", m.up);
  metric("cuzk_store_claims_total", "counter", "Partitions this node claimed from the shared queue.", m.claims);
  metric("cuzk_store_lease_expiries_total", "counter",
         "Partitions this node claimed after another node's lease on them expired.", m.taken_over);
  metric("cuzk_store_leases_lost_total", "counter",
         "Leases of this node that expired and went to another node, or whose job ended elsewhere.", m.lost);
  metric("cuzk_store_conflicts_total", "counter",
         "Reports of this node refused because it no longer held the partition's lease.", m.conflicts);
  metric("cuzk_store_reconnects_total", "counter", "Times the job store was reached again after a loss.",
         m.reconnects);
  metric("cuzk_store_reports_waiting", "gauge", "Results and releases waiting for the job store to be reachable.",
         m.waiting);
  return out;
}

}  // namespace cuzk::sup
