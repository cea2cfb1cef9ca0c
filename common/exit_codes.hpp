// The exit statuses of cuzk's processes: the supervisor, its workers and the `cuzk` command. Each
// is defined once here and used by name; docs/OPERATIONS.md lists which process exits with which,
// what it means there, and whether systemd or the supervisor restarts it. The values from 64 up
// follow sysexits.h, so that service managers and scripts read them the usual way.
#pragma once

namespace cuzk::exit_status {

inline constexpr int kOk = 0;
inline constexpr int kFailure = 1;         // the work failed (start-up, a device error, a failed job or proof)
inline constexpr int kBadInput = 2;        // `cuzk`: an input is malformed, or the daemon refused the request
inline constexpr int kUsage = 64;          // EX_USAGE: bad command line
inline constexpr int kSoftware = 70;       // EX_SOFTWARE: generated witness code crashed, the daemon failed, ...
inline constexpr int kIoError = 74;        // EX_IOERR: a file or the daemon could not be read or written
inline constexpr int kTryLater = 75;       // EX_TEMPFAIL: the daemon is full or draining
inline constexpr int kNoPermission = 77;   // EX_NOPERM: the daemon refused the token
inline constexpr int kConfig = 78;         // EX_CONFIG: configuration error; never restarted
inline constexpr int kTimedOut = 124;      // `cuzk await`: the timeout passed first, like timeout(1)

}  // namespace cuzk::exit_status
