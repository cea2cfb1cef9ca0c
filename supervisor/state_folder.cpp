#include "supervisor/state_folder.hpp"

#include <sys/statvfs.h>

#include <filesystem>

#include <spdlog/spdlog.h>

#include "shm/results.hpp"
#include "supervisor/store/state_writes.hpp"

namespace fs = std::filesystem;

namespace cuzk::sup {

void StateFolder::note_full(const std::string& why, bool space) {
  if (full_) return;
  full_ = true;
  for_space_ = space;
  if (space)
    spdlog::error("the disk under daemon.state_dir ({}) is full: {}; submissions get 503, and changes of accepted "
                  "jobs are held in memory until space is freed",
                  dir_, why);
  else
    spdlog::error("daemon.state_dir ({}) cannot be written: {}; submissions get 503, and changes of accepted jobs "
                  "are held in memory until it can",
                  dir_, why);
}

void StateFolder::clear() {
  if (!full_) return;
  full_ = false;
  if (for_space_)
    spdlog::info("space under daemon.state_dir ({}) is back: held changes written, accepting jobs again", dir_);
  else
    spdlog::info("daemon.state_dir ({}) can be written again: held changes written, accepting jobs again", dir_);
}

std::string StateFolder::full_message() const {
  if (!for_space_)
    return "the state folder daemon.state_dir (" + dir_ +
           ") cannot be written (the daemon's log says why): not accepting jobs until it can; retry later";
  return "the disk under daemon.state_dir (" + dir_ + ") is full: not accepting jobs until space is freed; retry later";
}

bool StateFolder::check_due(uint64_t now_ns) {
  if (!full_ || now_ns - last_check_ns_ < 1000000000ull) return false;
  last_check_ns_ = now_ns;
  return true;
}

bool StateFolder::low_space() const {
  struct statvfs vf {};
  return ::statvfs(dir_.c_str(), &vf) == 0 && uint64_t(vf.f_bavail) * vf.f_frsize < (1u << 20);
}

std::string StateFolder::write_problem() const {
  if (low_space()) return "less than 1 MiB free";
  const fs::path state = dir_;
  for (const fs::path& d : {shm::results_root(state), state / "uploads"})
    if (std::string why = write_probe(d.string()); !why.empty()) return why;
  return "";
}

}  // namespace cuzk::sup
