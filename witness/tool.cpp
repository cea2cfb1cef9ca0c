// The keeper of a build's tool. Forked from a process that may run threads (the supervisor's thread
// pool, a synthesis worker), it calls only async-signal-safe functions, and it does not exec:
// everything it needs (the program's path, argv, a message) is prepared before the fork.
//
// Why a keeper and not PR_SET_PDEATHSIG on the tool itself: the compiler driver starts the compiler
// proper and the assembler, which would not die with it. The keeper learns of its parent's death by
// PR_SET_PDEATHSIG, which the kernel sends when the *thread* that forked the keeper ends; the threads
// that start tools wait for their keepers (start_tool's contract), so that happens only when the
// process ends. It then kills the tool's process group while the tool, its child and the group's
// leader, is not yet reaped: its pid, and so the group's id, cannot have been reused.
#include "witness/tool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "witness/manifest.hpp"

extern char** environ;

namespace cuzk::witness {

namespace {

// What the kernel sends the keeper when its parent is gone; blocked, and taken by sigwaitinfo.
constexpr int kParentGone = SIGTERM;

// argv[0] found as execvp would find it, here: PATH is searched with getenv and strings, which the
// child may not use.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  const std::string path = env && *env ? env : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0;;) {
    const size_t end = path.find(':', start);
    std::string dir = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (end == std::string::npos) return "";
    start = end + 1;
  }
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Closes every descriptor from `low` up: the keeper holds none of its parent's sockets or files.
void close_from(int low) {
  if (::syscall(SYS_close_range, unsigned(low), ~0u, 0u) == 0) return;
  rlimit r{};
  const rlim_t n = ::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? r.rlim_cur : 65536;
  for (rlim_t fd = rlim_t(low); fd < n; fd++) ::close(int(fd));
}

struct Prepared {
  pid_t parent;
  const char* path;
  char* const* argv;
  int out_fd, null_fd;
  const char* exec_failed;  // written to the tool's output when exec fails
  size_t exec_failed_len;
  rlim_t cpu_seconds;       // 0: no limit
};

// The keeper: in the child of fork(), with every signal blocked.
[[noreturn]] void keep(const Prepared& p) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++) ::sigaction(s, &dfl, nullptr);  // the parent's handlers are not the keeper's
  ::prctl(PR_SET_PDEATHSIG, kParentGone);
  if (::getppid() != p.parent) ::_exit(128 + SIGKILL);  // it died before prctl took effect: start nothing
  const int out = ::fcntl(p.out_fd, F_DUPFD, 3), in = ::fcntl(p.null_fd, F_DUPFD, 3);
  if (out < 0 || in < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) ::_exit(127);
  close_from(3);
  const pid_t tool = ::fork();
  if (tool < 0) ::_exit(127);
  if (tool == 0) {
    ::setpgid(0, 0);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (p.cpu_seconds) {
      const rlimit cpu{p.cpu_seconds, p.cpu_seconds + 5};
      ::setrlimit(RLIMIT_CPU, &cpu);
    }
    ::execve(p.path, p.argv, environ);
    if (::write(2, p.exec_failed, p.exec_failed_len) < 0) {
    }
    ::_exit(127);
  }
  ::setpgid(tool, tool);  // as the tool does itself: the group exists whichever runs first
  sigset_t wake;
  ::sigemptyset(&wake);
  ::sigaddset(&wake, SIGCHLD);
  ::sigaddset(&wake, kParentGone);
  for (;;) {
    siginfo_t si{};
    const int s = ::sigwaitinfo(&wake, &si);
    if (s == kParentGone) break;
    if (s != SIGCHLD) continue;
    siginfo_t w{};
    if (::waitid(P_PID, id_t(tool), &w, WEXITED | WNOHANG | WNOWAIT) == 0 && w.si_pid == tool) break;
  }
  // The tool, not yet reaped, keeps the group's id its own. Whatever it left running goes with it.
  ::kill(-tool, SIGKILL);
  int status = 0;
  while (::waitpid(tool, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(exit_code(status));
}

}  // namespace

pid_t start_tool(const std::vector<std::string>& argv, int out_fd, rlim_t cpu_seconds) {
  const std::string path = find_program(argv.at(0));
  if (path.empty()) throw WitnessError("cannot run " + argv[0] + ": " + std::strerror(ENOENT));
  const std::string failed = "cannot run " + path + "\n";
  std::vector<char*> av;
  for (const std::string& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) throw WitnessError(std::string("/dev/null: ") + std::strerror(errno));
  const Prepared p{::getpid(), path.c_str(), av.data(), out_fd, null_fd, failed.c_str(), failed.size(), cpu_seconds};
  // Every signal blocked across the fork: none may run this process's handlers in the keeper.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  if (pid == 0) keep(p);
  const int e = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(null_fd);
  if (pid < 0) throw WitnessError("cannot run " + argv[0] + ": fork: " + std::strerror(e));
  return pid;
}

}  // namespace cuzk::witness
