// `cuzk circuit add|list|remove`: the circuits a running daemon serves, added and removed without a
// restart (operators only: root or the daemon's user on the socket, or the admin token over TCP).
#include <cstdio>
#include <filesystem>

#include "daemon_client.hpp"

namespace cuzk::cli {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

// One request; its answer when it is 2xx, else nullopt with the error written and rc set.
std::optional<ojson> call(const HttpClient& c, const char* method, const std::string& target, const std::string& body,
                          double timeout_s, std::ostream& err, int& rc) {
  HttpResponse r;
  try {
    r = c.request(method, target, body, timeout_s);
  } catch (const ConnectError& e) {
    err << "error: " << e.what() << "\n";
    rc = exit_status::kIoError;
    return std::nullopt;
  }
  if (r.status < 200 || r.status >= 300) {
    err << "error: " << error_message(r) << "\n";
    rc = exit_code_for_status(r.status);
    return std::nullopt;
  }
  try {
    rc = 0;
    return ojson::parse(r.body);
  } catch (const std::exception& e) {
    err << "error: unexpected answer from the daemon: " << e.what() << "\n";
    rc = exit_status::kIoError;
    return std::nullopt;
  }
}

// The daemon takes a path inside its key_dirs as written: this one resolved as this client sees it.
std::string absolute(const std::string& p) { return p.empty() ? p : fs::weakly_canonical(fs::absolute(p)).string(); }

}  // namespace

int cmd_circuit_add(const HttpClient& c, const CircuitArgs& a, std::ostream& out, std::ostream& err) {
  ojson body = {{"name", a.name}, {"zkey", absolute(a.zkey)}};
  if (!a.r1cs.empty()) body["r1cs"] = absolute(a.r1cs);
  if (!a.witness_generator.empty()) body["witness_generator"] = absolute(a.witness_generator);
  if (a.max_partitions) body["max_partitions"] = a.max_partitions;
  int rc = 0;
  // Building a witness generator from circom's sources takes as long as its compiler.
  const auto got = call(c, "POST", "/v1/circuits", body.dump(), 3600.0, err, rc);
  if (!got) return rc;
  out << "circuit " << str_or(*got, "name") << " added: " << str_or(*got, "curve") << ", " << str_or(*got, "n_vars")
      << " variables, domain " << str_or(*got, "domain_size")
      << (got->value("inputs", false) ? ", takes circuit inputs" : ", takes witnesses") << "\n";
  return 0;
}

int cmd_circuit_list(const HttpClient& c, bool json, std::ostream& out, std::ostream& err) {
  int rc = 0;
  const auto got = call(c, "GET", "/v1/circuits", "", 30.0, err, rc);
  if (!got) return rc;
  if (json) {
    out << got->dump(2) << "\n";
    return 0;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-8s %-12s %-8s %10s %10s  %s\n", "NAME", "SOURCE", "STATE", "CURVE", "VARS",
                "DOMAIN", "INPUTS");
  out << line;
  for (const auto& e : got->value("circuits", ojson::array())) {
    std::snprintf(line, sizeof line, "%-24s %-8s %-12s %-8s %10s %10s  %s\n", str_or(e, "name").c_str(),
                  str_or(e, "source").c_str(), str_or(e, "state").c_str(), str_or(e, "curve").c_str(),
                  str_or(e, "n_vars").c_str(), str_or(e, "domain_size").c_str(),
                  e.contains("inputs") ? (e["inputs"].get<bool>() ? "yes" : "no") : "-");
    out << line;
    if (e.contains("error")) out << "  " << str_or(e, "error") << "\n";
  }
  return 0;
}

int cmd_circuit_remove(const HttpClient& c, const std::string& name, std::ostream& out, std::ostream& err) {
  int rc = 0;
  const auto got = call(c, "DELETE", "/v1/circuits/" + url_encode(name), "", 60.0, err, rc);
  if (!got) return rc;
  out << "circuit " << name << " removed";
  if (const std::string n = str_or(*got, "unfinished_jobs", "0"); n != "0") out << "; " << n << " of its jobs finish first";
  out << "\n";
  return 0;
}

}  // namespace cuzk::cli
