// Progress and stage timing on stderr for anything that takes more than a moment.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace cuzk::cli {

// Prints "label ... 1.23 s" per stage; on a terminal also a live percentage for long loops.
class Progress {
 public:
  explicit Progress(bool quiet = false) : quiet_(quiet), tty_(isatty(2)) {}
  // Starts a named stage (ends the previous one).
  void stage(const std::string& label) {
    end();
    label_ = label;
    t0_ = std::chrono::steady_clock::now();
    last_pct_ = -1;
    if (!quiet_) std::fprintf(stderr, "%s ...%s", label_.c_str(), tty_ ? "" : "\n");
  }
  // Reports done/total for the current stage; cheap to call often.
  void update(size_t done, size_t total) {
    if (quiet_ || !tty_ || total == 0) return;
    int pct = (int)(100.0 * (double)done / (double)total);
    if (pct == last_pct_) return;
    last_pct_ = pct;
    std::fprintf(stderr, "\r%s ... %3d%%", label_.c_str(), pct);
  }
  // Ends the current stage and prints its duration.
  void end() {
    if (label_.empty()) return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    if (!quiet_) {
      if (tty_)
        std::fprintf(stderr, "\r%s ... done in %.3f s\n", label_.c_str(), s);
      else
        std::fprintf(stderr, "%s: %.3f s\n", label_.c_str(), s);
    }
    label_.clear();
  }
  ~Progress() { end(); }

 private:
  bool quiet_, tty_;
  std::string label_;
  std::chrono::steady_clock::time_point t0_;
  int last_pct_ = -1;
};

}  // namespace cuzk::cli
