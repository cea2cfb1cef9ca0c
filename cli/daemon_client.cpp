#include "daemon_client.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace cuzk::cli {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

std::string base64(const std::string& in) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = ((uint8_t)in[i] << 16) | ((uint8_t)in[i + 1] << 8) | (uint8_t)in[i + 2];
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += t[(v >> 6) & 63];
    out += t[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = (uint8_t)in[i] << 16;
    if (i + 1 < in.size()) v |= (uint8_t)in[i + 1] << 8;
    out += t[v >> 18];
    out += t[(v >> 12) & 63];
    out += i + 1 < in.size() ? t[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument(path + ": cannot open");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A circuit inputs file (the JSON object `snarkjs wtns calculate` reads), to send inline.
ojson read_inputs(const std::string& path) {
  ojson j;
  try {
    j = ojson::parse(read_file(path));
  } catch (const ojson::parse_error& e) {
    throw std::invalid_argument(path + ": not a JSON file (syntax error at byte " + std::to_string(e.byte) + ")");
  }
  if (!j.is_object()) throw std::invalid_argument(path + ": not a JSON object of input signals");
  return j;
}

// Writes `text` to `path` through a temporary file and a rename, so readers never see half a file.
void write_atomic(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(tmp.string() + ": cannot create");
    f << text;
    if (!f.flush()) throw std::runtime_error(tmp.string() + ": write failed");
  }
  fs::rename(tmp, path);
}

bool is_final(const std::string& s) { return s == "done" || s == "failed" || s == "cancelled"; }

}  // namespace

std::string str_or(const ojson& j, const char* key, const std::string& dflt) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return dflt;
  if (it->is_string()) return it->get<std::string>();
  return it->dump();
}

int exit_code_for_status(int status) {
  if (status >= 200 && status < 300) return exit_status::kOk;
  if (status == 401 || status == 403) return kNoPermission;
  if (status == 429 || status == 503) return kTryLater;
  if (status >= 400 && status < 500) return exit_status::kBadInput;
  return kServerError;
}

std::string error_message(const HttpResponse& r) {
  try {
    auto j = nlohmann::json::parse(r.body);
    if (j.contains("error") && j["error"].is_object() && j["error"].contains("message"))
      return j["error"]["message"].get<std::string>();
  } catch (...) {
  }
  std::string b = r.body.substr(0, 500);
  while (!b.empty() && (b.back() == '\n' || b.back() == '\r')) b.pop_back();
  return b.empty() ? "HTTP " + std::to_string(r.status) : "HTTP " + std::to_string(r.status) + ": " + b;
}

std::string snarkjs_dump(const std::string& json_text) { return ojson::parse(json_text).dump(1); }

std::string submit_body(const SubmitArgs& a) {
  ojson body;
  body["circuit"] = a.circuit;
  if (!a.inputs.empty()) {
    body["inputs"] = ojson::array();
    for (const auto& f : a.inputs) body["inputs"].push_back(read_inputs(f));
  } else {
    body["witnesses"] = ojson::array();
    for (const auto& w : a.witnesses) {
      if (a.upload) body["witnesses"].push_back({{"base64", base64(read_file(w))}});
      else body["witnesses"].push_back(fs::absolute(fs::path(w)).lexically_normal().string());
    }
  }
  if (!a.priority.empty()) body["priority"] = a.priority;
  if (!a.request_id.empty()) body["request_id"] = a.request_id;
  return body.dump();
}

int post_job(const HttpClient& c, const std::string& body, std::string& id, std::string& error) {
  HttpResponse r;
  try {
    r = c.request("POST", "/v1/proofs", body);
  } catch (const ConnectError& e) {
    error = e.what();
    return exit_status::kIoError;
  }
  if (r.status != 200 && r.status != 201) {
    error = error_message(r);
    return exit_code_for_status(r.status);
  }
  try {
    id = nlohmann::json::parse(r.body).at("id").get<std::string>();
  } catch (const std::exception&) {
    error = "unexpected answer from the daemon: " + r.body.substr(0, 200);
    return exit_status::kIoError;
  }
  return 0;
}

int cmd_submit(const HttpClient& c, const SubmitArgs& a, std::ostream& out, std::ostream& err) {
  std::string body, id, error;
  try {
    body = submit_body(a);
  } catch (const std::invalid_argument& e) {
    err << "error: " << e.what() << "\n";
    return exit_status::kBadInput;
  }
  if (int rc = post_job(c, body, id, error)) {
    err << "error: " << error << "\n";
    return rc;
  }
  out << id << "\n";
  out.flush();
  return 0;
}

AwaitResult await_final(const HttpClient& c, const AwaitArgs& a, std::ostream& err) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const bool has_deadline = a.timeout_s >= 0;
  const auto deadline = start + std::chrono::milliseconds((long long)(std::max(0.0, a.timeout_s) * 1000));
  auto left_s = [&] { return std::chrono::duration<double>(deadline - clock::now()).count(); };
  auto last_contact = start;
  double backoff = 0.2;
  bool warned = false;
  std::string last_state = "unknown";
  AwaitResult res;
  auto fail = [&](int rc, std::string why) {
    res.rc = rc;
    res.error = std::move(why);
    return res;
  };
  const std::string target_base = "/v1/proofs/" + url_encode(a.job) + "?wait=";
  for (bool first = true;; first = false) {
    long wait = (long)a.max_poll_s;
    if (has_deadline) wait = std::min<long>(wait, (long)std::floor(std::max(0.0, left_s())));
    if (has_deadline && !first && left_s() <= 0)
      return fail(kTimedOut, "timed out waiting for job " + a.job + " (state " + last_state + ")");
    auto sent = clock::now();
    HttpResponse r;
    bool retry = false;
    std::string why;
    try {
      r = c.request("GET", target_base + std::to_string(wait), "", (double)wait + 60.0);
      if (r.status == 503 || r.status == 502 || r.status == 504) {
        retry = true;
        why = error_message(r);
      }
    } catch (const ConnectError& e) {
      retry = true;
      why = e.what();
    }
    if (retry) {
      double down = std::chrono::duration<double>(clock::now() - last_contact).count();
      if (has_deadline && left_s() <= 0) return fail(kTimedOut, "timed out waiting for job " + a.job + " (" + why + ")");
      if (down >= a.reconnect_s) return fail(exit_status::kIoError, why);
      if (!warned) {
        err << "cuzk await: " << why << "; retrying\n";
        warned = true;
      }
      double nap = backoff;
      if (has_deadline) nap = std::min(nap, std::max(0.0, left_s()));
      std::this_thread::sleep_for(std::chrono::milliseconds((long long)(nap * 1000)));
      backoff = std::min(backoff * 2, 2.0);
      continue;
    }
    last_contact = clock::now();
    backoff = 0.2;
    warned = false;
    if (r.status != 200) return fail(exit_code_for_status(r.status), error_message(r));
    ojson job;
    try {
      job = ojson::parse(r.body);
    } catch (const std::exception& e) {
      return fail(exit_status::kIoError, std::string("unexpected answer from the daemon: ") + e.what());
    }
    last_state = str_or(job, "state", "unknown");
    if (is_final(last_state)) {
      res.job = std::move(job);
      break;
    }
    // A daemon that answers a long poll early must not turn this into a busy loop.
    auto took = std::chrono::duration<double>(clock::now() - sent).count();
    if (took < 0.25) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  // Final: done with a proof for every partition, or failed (cancelled) and why.
  size_t proved = 0, parts = 0;
  if (res.job.contains("partitions") && res.job["partitions"].is_array())
    for (const auto& p : res.job["partitions"]) {
      parts++;
      if (str_or(p, "state") == "done" && p.contains("proof") && p.contains("public")) proved++;
    }
  if (last_state == "done") {
    if (proved == parts && parts != 0) return res;
    return fail(kJobFailed, "job " + a.job + " is done but only " + std::to_string(proved) + " of " +
                                std::to_string(parts) + " partitions carry a proof");
  }
  std::string msg = str_or(res.job, "error", "");
  return fail(kJobFailed, "job " + a.job + " " + last_state + (msg.empty() ? "" : ": " + msg));
}

void write_proofs(const nlohmann::ordered_json& job, const std::string& dir) {
  if (!job.contains("partitions") || !job["partitions"].is_array()) return;
  long n = 0;
  for (const auto& p : job["partitions"]) {
    long idx = p.value("index", n++);
    if (str_or(p, "state") != "done" || !p.contains("proof") || !p.contains("public")) continue;
    write_atomic(fs::path(dir) / ("proof_" + std::to_string(idx) + ".json"), p["proof"].dump(1));
    write_atomic(fs::path(dir) / ("public_" + std::to_string(idx) + ".json"), p["public"].dump(1));
  }
}

int cmd_await(const HttpClient& c, const AwaitArgs& a, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  if (ec) {
    err << "error: " << a.out_dir << ": " << ec.message() << "\n";
    return exit_status::kIoError;
  }
  AwaitResult res = await_final(c, a, err);
  // Every partition that has a proof is written, also for a job that failed.
  try {
    write_proofs(res.job, a.out_dir);
  } catch (const std::exception& e) {
    err << "error: writing the proofs to " << a.out_dir << ": " << e.what() << "\n";
    return exit_status::kIoError;
  }
  if (res.rc) err << "error: " << res.error << "\n";
  return res.rc;
}

int cmd_status(const HttpClient& c, bool json, std::ostream& out, std::ostream& err) {
  HttpResponse r;
  try {
    r = c.request("GET", "/v1/status", "", 30.0);
  } catch (const ConnectError& e) {
    err << "error: " << e.what() << "\n";
    return exit_status::kIoError;
  }
  if (r.status != 200) {
    err << "error: " << error_message(r) << "\n";
    return exit_code_for_status(r.status);
  }
  ojson s;
  try {
    s = ojson::parse(r.body);
  } catch (const std::exception& e) {
    err << "error: unexpected answer from the daemon: " << e.what() << "\n";
    return exit_status::kIoError;
  }
  if (json) {
    out << s.dump(2) << "\n";
    return 0;
  }
  char line[512];
  std::snprintf(line, sizeof line, "cuzk daemon %s: pid %s, %s, up %s s, backend %s\n", str_or(s, "instance").c_str(),
                str_or(s, "pid").c_str(), str_or(s, "state").c_str(), str_or(s, "uptime_s").c_str(),
                str_or(s, "backend").c_str());
  out << line;
  if (s.contains("store") && s["store"].is_object()) {
    const auto& st = s["store"];
    std::string where = str_or(st, "where", "");
    std::string state = st.contains("connected") && st["connected"].is_boolean()
                            ? (st["connected"].get<bool>() ? ", connected" : ", UNREACHABLE")
                            : "";
    out << "store " << str_or(st, "backend") << (where.empty() ? "" : " at " + where) << ", node "
        << str_or(st, "node_id") << state << "\n";
  }
  out << "\nworkers\n";
  std::snprintf(line, sizeof line, "  %-10s %-6s %-6s %-8s %-12s %-9s %8s  %s\n", "NAME", "KIND", "DEVICE", "PID",
                "CPUS", "STATE", "RESTARTS", "WORK");
  out << line;
  if (s.contains("workers"))
    for (const auto& w : s["workers"]) {
      std::string work = "-";
      if (w.contains("job") && !w["job"].is_null())
        work = "job " + str_or(w, "job") + (w.contains("partition") && !w["partition"].is_null()
                                                 ? " p" + str_or(w, "partition")
                                                 : "");
      std::snprintf(line, sizeof line, "  %-10s %-6s %-6s %-8s %-12s %-9s %8s  %s\n", str_or(w, "name").c_str(),
                    str_or(w, "kind").c_str(), str_or(w, "device", "-").c_str(), str_or(w, "pid").c_str(),
                    str_or(w, "cpus").c_str(), str_or(w, "state").c_str(), str_or(w, "restarts").c_str(), work.c_str());
      out << line;
    }
  if (s.contains("devices") && !s["devices"].empty()) {
    out << "\ndevices\n";
    std::snprintf(line, sizeof line, "  %-4s %-8s %6s %12s %5s %6s %6s %8s\n", "ID", "BACKEND", "SLOTS", "SLOT_BYTES",
                  "FREE", "SYNTH", "READY", "PROVING");
    out << line;
    for (const auto& d : s["devices"]) {
      std::snprintf(line, sizeof line, "  %-4s %-8s %6s %12s %5s %6s %6s %8s\n", str_or(d, "id").c_str(),
                    str_or(d, "backend").c_str(), str_or(d, "slots").c_str(), str_or(d, "slot_bytes").c_str(),
                    str_or(d, "free").c_str(), str_or(d, "synthesizing").c_str(), str_or(d, "ready").c_str(),
                    str_or(d, "proving").c_str());
      out << line;
    }
    // Each device's keys: resident or not, and how often they were loaded and given back.
    bool header = false;
    for (const auto& d : s["devices"]) {
      if (!d.contains("keys")) continue;
      for (const auto& k : d["keys"]) {
        if (!header) {
          out << "\nkeys\n";
          std::snprintf(line, sizeof line, "  %-6s %-24s %-8s %14s %6s %9s %12s\n", "DEVICE", "CIRCUIT", "RESIDENT",
                        "BYTES", "LOADS", "EVICTIONS", "LAST_LOAD_MS");
          out << line;
          header = true;
        }
        const bool resident = k.contains("resident") && k["resident"].is_boolean() && k["resident"].get<bool>();
        std::snprintf(line, sizeof line, "  %-6s %-24s %-8s %14s %6s %9s %12s\n", str_or(d, "id").c_str(),
                      str_or(k, "circuit").c_str(), resident ? "yes" : "no", str_or(k, "bytes").c_str(),
                      str_or(k, "loads").c_str(), str_or(k, "evictions").c_str(), str_or(k, "last_load_ms").c_str());
        out << line;
      }
    }
  }
  if (s.contains("queues")) {
    const auto& q = s["queues"];
    out << "\nqueues: " << str_or(q, "jobs_queued", "0") << " jobs queued, " << str_or(q, "jobs_running", "0")
        << " running, " << str_or(q, "partitions_queued", "0") << " partitions queued\n";
  }
  return 0;
}

int cmd_cancel(const HttpClient& c, const std::string& job, std::ostream& out, std::ostream& err) {
  HttpResponse r;
  try {
    r = c.request("DELETE", "/v1/proofs/" + url_encode(job), "", 60.0);
  } catch (const ConnectError& e) {
    err << "error: " << e.what() << "\n";
    return exit_status::kIoError;
  }
  if (r.status != 200) {
    err << "error: " << error_message(r) << "\n";
    return exit_code_for_status(r.status);
  }
  std::string state = "cancelled";
  try {
    state = nlohmann::json::parse(r.body).value("state", state);
  } catch (...) {
  }
  out << job << " " << state << "\n";
  return 0;
}

}  // namespace cuzk::cli
