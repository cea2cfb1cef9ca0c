// Writes under daemon.state_dir that fail for a reason no request caused: a full disk, and as much
// a read-only or unwritable folder or an I/O error. They are the daemon's fault, not a job's: held
// and retried (an accepted job keeps its attempts), answered 503 to submissions, and logged once
// with the system's reason, which no client is shown.
#pragma once
#include <string>

namespace cuzk::sup {

// Whether errno e is such a failure; no_space: ENOSPC or EDQUOT.
bool state_write_fault(int e);
bool no_space(int e);
// Throws StateWriteFailed (job_store.hpp), with space for ENOSPC and EDQUOT: a write under
// state_dir that fails is the daemon's fault whatever the reason. what names what was written.
[[noreturn]] void throw_write_error(const std::string& what, int e);
// Why a file cannot be created in dir now, or "" when it can (a probe file made and removed).
std::string write_probe(const std::string& dir);

}  // namespace cuzk::sup
