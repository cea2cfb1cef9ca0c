// The state folder (daemon.state_dir) as the daemon's place to write: the job store, the proofs'
// result files and the submissions' uploads. A write there that fails for lack of space, or because
// the folder cannot be written (read-only, permissions, I/O errors), is the daemon's fault and not a
// job's (store/state_writes.hpp): from then on the folder is "full" until writes succeed again.
// While it is, submissions get 503, the store's changes are held in memory and READY slots wait,
// since their proofs' result files could not be written; Supervisor::check_disk_space, on the tick,
// writes what was held once the folder takes writes again.
#pragma once
#include <cstdint>
#include <string>

namespace cuzk::sup {

class StateFolder {
 public:
  explicit StateFolder(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  bool full() const { return full_; }
  // The folder became full: logged once, until cleared. space: for lack of space (else it cannot be
  // written).
  void note_full(const std::string& why, bool space = true);
  // Writes succeed again.
  void clear();
  // What a client refused for it is told (never the system's reason, which is in the log).
  std::string full_message() const;
  // Whether a full folder is due for its check (once a second), now.
  bool check_due(uint64_t now_ns);

  bool low_space() const;  // less than a MiB free
  // Why the folder cannot take writes now (low space, or no file can be made in results/ or
  // uploads/), or "".
  std::string write_problem() const;

 private:
  std::string dir_;
  bool full_ = false;
  bool for_space_ = true;  // the failure was for lack of space
  uint64_t last_check_ns_ = 0;
};

}  // namespace cuzk::sup
