// Process descriptors (Linux 5.3 and later): a descriptor bound to one process, which stays bound to
// it after it exits, so that a signal sent through it can never reach another process that reused
// the pid, and a poll() on it says when that process (and no other) has exited. Where the kernel
// has none, open_pidfd fails with ENOSYS and callers fall back to the pid.
#pragma once
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

namespace cuzk {

// A descriptor of pid, which must be a child not yet reaped (or any live process); close-on-exec.
// -1 with errno set when it cannot be had.
inline int open_pidfd(pid_t pid) { return int(::syscall(SYS_pidfd_open, pid, 0u)); }

// Sends sig to the process of fd: 0, or -1 with errno ESRCH once that process has exited.
inline int signal_pidfd(int fd, int sig) { return int(::syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0u)); }

}  // namespace cuzk
