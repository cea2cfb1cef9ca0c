// Registers the daemon client and timeline subcommands on the `cuzk` command line.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "daemon_client.hpp"
#include "load.hpp"
#include "timeline.hpp"
#include "waterfall.hpp"

namespace cuzk::cli {

namespace {

struct Opts {
  Endpoint ep;
  SubmitArgs submit;
  AwaitArgs await;
  bool status_json = false;
  std::string cancel_job;
  CircuitArgs circuit;
  bool circuit_json = false;
  LoadArgs load;
  std::string format = "chrome";
  std::string log;
  std::string out_file;
  std::string svg_file;
  int width = 72;
  size_t max_jobs = 30;
};

#ifdef CUZK_HAVE_HTTP_CLIENT
// --socket PATH | --tcp HOST:PORT [--token T]; CUZK_SOCKET and CUZK_TOKEN are the defaults.
void add_endpoint(CLI::App* sub, Opts& o) {
  auto* s = sub->add_option("--socket", o.ep.unix_path, "the daemon's unix socket")->envname("CUZK_SOCKET");
  auto* t = sub->add_option("--tcp", o.ep.tcp, "the daemon's TCP address host:port (instead of --socket)");
  s->excludes(t);
  sub->add_option("--token", o.ep.token, "bearer token for --tcp")->envname("CUZK_TOKEN");
}

int check_endpoint(const Opts& o) {
  if (o.ep.unix_path.empty() && o.ep.tcp.empty()) {
    std::fprintf(stderr, "error: --socket PATH (or --tcp HOST:PORT) is required\n");
    return exit_status::kUsage;
  }
  return 0;
}
#endif

}  // namespace

std::function<std::optional<int>()> add_daemon_subcommands(CLI::App& app) {
  auto o = std::make_shared<Opts>();

#ifdef CUZK_HAVE_HTTP_CLIENT
  auto* submit = app.add_subcommand("submit", "submit a proof job to the daemon; prints the job id");
  add_endpoint(submit, *o);
  submit->add_option("--circuit", o->submit.circuit, "circuit name from the daemon's config")->required();
  auto* wit = submit->add_option("--witness", o->submit.witnesses, "witness file (.wtns), one per partition, in order")
                  ->take_all();
  auto* inp = submit->add_option("--input", o->submit.inputs,
                                 "circuit inputs (JSON, as for snarkjs wtns calculate), one per partition, in order; "
                                 "sent in the request, for circuits with a witness_generator")
                  ->take_all();
  wit->excludes(inp);
  submit->add_option("--priority", o->submit.priority, "critical, high, normal or low")
      ->check(CLI::IsMember({"critical", "high", "normal", "low"}));
  submit->add_option("--request-id", o->submit.request_id, "idempotency key (resubmitting returns the same job)");
  submit->add_flag("--upload", o->submit.upload, "send the witness bytes instead of their paths")->excludes(inp);

  auto* await = app.add_subcommand("await", "wait for a job and write DIR/proof_<i>.json and DIR/public_<i>.json");
  add_endpoint(await, *o);
  await->add_option("--out", o->await.out_dir, "output folder (created)")->required();
  await->add_option("--timeout", o->await.timeout_s, "give up after SECONDS (exit 124)")->check(CLI::NonNegativeNumber);
  await->add_option("--reconnect", o->await.reconnect_s, "how long the daemon may be unreachable (default 60 s)")
      ->check(CLI::NonNegativeNumber);
  await->add_option("job", o->await.job, "job id")->required();

  auto* status = app.add_subcommand("status", "show the daemon's workers, devices and queues");
  add_endpoint(status, *o);
  status->add_flag("--json", o->status_json, "print the status JSON");

  auto* cancel = app.add_subcommand("cancel", "cancel a job");
  add_endpoint(cancel, *o);
  cancel->add_option("job", o->cancel_job, "job id")->required();

  auto* circuit = app.add_subcommand("circuit", "circuits the daemon serves, added and removed while it runs");
  circuit->require_subcommand(1);
  auto* c_add = circuit->add_subcommand(
      "add", "check a circuit as start-up would and serve it (its files under the daemon's key_dirs; operators)");
  add_endpoint(c_add, *o);
  c_add->add_option("--name", o->circuit.name, "the circuit's name, as jobs give it")->required();
  c_add->add_option("--zkey", o->circuit.zkey, "its snarkjs proving key")->required();
  c_add->add_option("--r1cs", o->circuit.r1cs, "its r1cs: synthesis then checks every constraint");
  c_add->add_option("--witness-generator", o->circuit.witness_generator,
                    "circom's --c output folder, its .wasm (or <name>_js folder), or a `cuzk witness build` "
                    "artefact: jobs may bring circuit inputs");
  c_add->add_option("--max-partitions", o->circuit.max_partitions, "partitions per job (default 16)")
      ->check(CLI::Range(1, 65536));
  auto* c_list = circuit->add_subcommand("list", "the circuits served, from the config file and added since");
  add_endpoint(c_list, *o);
  c_list->add_flag("--json", o->circuit_json, "print the JSON");
  auto* c_remove = circuit->add_subcommand("remove", "take no new jobs for a circuit added at run time (operators)");
  add_endpoint(c_remove, *o);
  c_remove->add_option("name", o->circuit.name, "circuit name")->required();

  auto* load = app.add_subcommand("load", "N clients each submitting single-partition jobs and awaiting them in turn: "
                                          "jobs/s and latency percentiles");
  add_endpoint(load, *o);
  load->add_option("--circuit", o->load.circuit, "circuit name from the daemon's config")->required();
  auto* l_wit = load->add_option("--witness", o->load.witnesses, "witness file (.wtns) of one job; several: used in turn")
                    ->take_all();
  auto* l_inp = load->add_option("--input", o->load.inputs, "circuit inputs (JSON) of one job; several: used in turn")
                    ->take_all();
  l_wit->excludes(l_inp);
  load->add_flag("--upload", o->load.upload, "send the witness bytes instead of their paths")->excludes(l_inp);
  load->add_option("--clients", o->load.clients, "concurrent clients (default 16)")->check(CLI::Range(1, 4096));
  auto* l_jobs = load->add_option("--jobs", o->load.jobs, "counted jobs in all (default 1000 without --seconds)")->check(CLI::PositiveNumber);
  auto* l_secs = load->add_option("--seconds", o->load.seconds, "or: submit new jobs for this long")
                     ->check(CLI::PositiveNumber);
  l_jobs->excludes(l_secs);
  load->add_option("--warmup", o->load.warmup, "jobs run first and not counted")->check(CLI::NonNegativeNumber);
  load->add_option("--job-timeout", o->load.job_timeout_s, "a job not final after SECONDS fails (default 600)")
      ->check(CLI::PositiveNumber);
  load->add_option("--out", o->load.out_dir, "keep each counted job's proof in DIR/<job id>/ (for snarkjs)");
  load->add_option("--vk", o->load.vk,
                   "verification_key.json: check every counted job's proof here too, after the run");
  load->add_option("--timeline", o->load.timeline,
                   "the daemon's <state_dir>/timeline.log: its JOB_SUBMIT to JOB_DONE time of the jobs done");
  load->add_flag("--json", o->load.json, "print the summary as JSON");
#endif

  auto* tl = app.add_subcommand("timeline", "timeline log tools");
  tl->require_subcommand(1);
  auto* tl_export = tl->add_subcommand("export", "export --format chrome LOG: a Chrome trace (Perfetto) on stdout");
  tl_export->add_option("--format", o->format, "chrome")->check(CLI::IsMember({"chrome"}));
  tl_export->add_option("-o,--output", o->out_file, "write to this file instead of stdout");
  tl_export->add_option("log", o->log, "merged timeline log")->required()->check(CLI::ExistingFile);

  auto* wf = app.add_subcommand("waterfall", "waterfall LOG: per-worker chart, GPU utilisation, idle causes, s/proof");
  wf->add_option("log", o->log, "merged timeline log")->required()->check(CLI::ExistingFile);
  wf->add_option("--width", o->width, "chart columns")->check(CLI::Range(10, 1000));
  wf->add_option("--jobs", o->max_jobs, "rows of the per-job table (0: every job)")->check(CLI::NonNegativeNumber);
  wf->add_option("--svg", o->svg_file, "also write the waterfall as an SVG chart to this file");

  return [=]() -> std::optional<int> {
    if (*tl_export || *wf) {
      size_t skipped = 0;
      auto events = timeline::read_log_file(o->log, &skipped);
      if (skipped) std::fprintf(stderr, "warning: %zu malformed TIMELINE lines skipped\n", skipped);
      if (*tl_export) {
        if (o->out_file.empty()) {
          timeline::export_chrome(events, std::cout);
          std::cout.flush();
          return std::cout ? 0 : 74;
        }
        std::ofstream f(o->out_file);
        if (!f) {
          std::fprintf(stderr, "error: %s: cannot create\n", o->out_file.c_str());
          return exit_status::kIoError;
        }
        timeline::export_chrome(events, f);
        return f.flush() ? 0 : 74;
      }
      const timeline::Waterfall w = timeline::analyze(events);
      timeline::render_waterfall(w, std::cout, o->width, o->max_jobs);
      if (!o->svg_file.empty()) {
        std::ofstream f(o->svg_file);
        if (f) timeline::render_svg(w, f);
        if (!f || !f.flush()) {
          std::fprintf(stderr, "error: %s: cannot write\n", o->svg_file.c_str());
          return exit_status::kIoError;
        }
      }
      return 0;
    }
#ifdef CUZK_HAVE_HTTP_CLIENT
    CLI::App* used = *submit   ? submit
                     : *await  ? await
                     : *status ? status
                     : *cancel ? cancel
                     : *c_add  ? c_add
                     : *c_list ? c_list
                     : *c_remove ? c_remove
                     : *load     ? load
                                 : nullptr;
    if (!used) return std::nullopt;
    if (int rc = check_endpoint(*o)) return rc;
    HttpClient client(o->ep);
    if (used == submit) {
      if (o->submit.witnesses.empty() && o->submit.inputs.empty()) {
        std::fprintf(stderr, "error: submit needs --witness FILE or --input FILE (one per partition)\n");
        return exit_status::kUsage;
      }
      return cmd_submit(client, o->submit);
    }
    if (used == await) return cmd_await(client, o->await);
    if (used == status) return cmd_status(client, o->status_json);
    if (used == c_add) return cmd_circuit_add(client, o->circuit);
    if (used == c_list) return cmd_circuit_list(client, o->circuit_json);
    if (used == c_remove) return cmd_circuit_remove(client, o->circuit.name);
    if (used == load) {
      if (o->load.witnesses.empty() && o->load.inputs.empty()) {
        std::fprintf(stderr, "error: load needs --witness FILE or --input FILE\n");
        return exit_status::kUsage;
      }
      if (!o->load.jobs && !(o->load.seconds > 0)) o->load.jobs = 1000;
      return cmd_load(o->ep, o->load);
    }
    return cmd_cancel(client, o->cancel_job);
#else
    return std::nullopt;
#endif
  };
}

}  // namespace cuzk::cli
