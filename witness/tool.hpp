// The tools a build runs (the compiler, the assembler, binutils, the new generator), started so that
// none outlives the process that started them: each runs in a process group of its own under a
// keeper, a child of this process that waits for it and, once this process dies (killed, crashed,
// ended at any point), kills the whole group: the compiler driver, the compiler proper and the
// assembler it started, before their outputs land in a folder that nothing will clean.
#pragma once
#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace cuzk::witness {

// Starts argv[0] (searched in PATH) with argv, stdin from /dev/null and stdout and stderr to out_fd.
// Returns the keeper's pid: a child of this process, to be waited for by that pid alone; its exit
// status is the tool's, or 128 + the number of the signal that ended the tool. The calling thread
// must wait for it before it ends (the keeper takes a thread's end for its parent's death).
// cpu_seconds, when not 0, is the tool's limit of CPU time (RLIMIT_CPU: SIGXCPU, then SIGKILL 5 s
// later). Throws WitnessError when argv[0] cannot be found or the keeper cannot be started.
pid_t start_tool(const std::vector<std::string>& argv, int out_fd, rlim_t cpu_seconds = 0);

}  // namespace cuzk::witness
