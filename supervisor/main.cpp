// cuzk-supervisor: the daemon's entry point. Validates the config (exit 78 on any error, naming
// the key), then runs the supervisor loop in the foreground (systemd Type=notify).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/exit_codes.hpp"
#include "common/log_escape.hpp"
#include "config/config.hpp"
#include "supervisor/preflight.hpp"
#include "supervisor/supervisor.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cuzk-supervisor: the cuzk Groth16 proving daemon (runs in the foreground)"};
  std::string config_path;
  bool check_only = false;
  app.add_option("--config", config_path, "the TOML configuration file")->required();
  app.add_flag("--check-config", check_only, "validate the configuration and exit (0 valid, 78 invalid)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? cuzk::exit_status::kOk : cuzk::exit_status::kUsage;
  }
  auto logger = spdlog::stderr_color_mt("cuzk");
  spdlog::set_default_logger(logger);
  cuzk::logging::set_escaped_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ supervisor: %*");

  cuzk::config::Config cfg;
  try {
    config_path = std::filesystem::absolute(config_path).string();
    cfg = cuzk::config::load_config(config_path);
    cuzk::config::validate_cpus(cfg);
    if (check_only) cuzk::sup::preflight(cfg, false);
  } catch (const cuzk::config::ConfigError& e) {
    std::fprintf(stderr, "cuzk-supervisor: %s: %s\n", config_path.c_str(), e.what());
    return cuzk::exit_status::kConfig;
  }
  spdlog::set_level(spdlog::level::from_str(cfg.daemon.log_level));
  if (check_only) {
    std::printf("%s: valid\n", config_path.c_str());
    return 0;
  }
  try {
    int rc;
    bool reload;
    {
      cuzk::sup::Supervisor s(std::move(cfg), config_path);
      rc = s.run();
      reload = s.reload_requested();
    }
    if (reload) {
      // The same program again, in this process (systemd keeps tracking the pid), on the new file.
      spdlog::info("starting again with {}", config_path);
      logger->flush();
      std::fflush(nullptr);
      ::execv("/proc/self/exe", argv);
      spdlog::critical("SIGHUP: cannot start again: {}", std::strerror(errno));
      return cuzk::exit_status::kFailure;
    }
    return rc;
  } catch (const cuzk::config::ConfigError& e) {
    std::fprintf(stderr, "cuzk-supervisor: %s: %s\n", config_path.c_str(), e.what());
    return cuzk::exit_status::kConfig;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return cuzk::exit_status::kFailure;
  }
}
