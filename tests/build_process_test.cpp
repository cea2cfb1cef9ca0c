// What a witness build leaves when its process dies: the tools it started die with it (start_tool),
// and its scratch folders are swept once no process holds them (ScratchDir, sweep_scratch), never
// while one does, whichever process that is. Processes are ended by SIGKILL or _exit, as a kill
// would end them: no destructor runs.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/pidfd.hpp"
#include "witness/manifest.hpp"
#include "witness/scratch.hpp"
#include "witness/tool.hpp"

using namespace cuzk::witness;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path p;
  TempDir() {
    char t[] = "/tmp/cuzk-build-process.XXXXXX";
    p = ::mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(p); }
};

int exit_code(pid_t pid) {
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// A process that claims <dir>/.<name>.tmp<its pid>, writes a file there, and ends at once with
// _exit (no destructor): the folder and its lock are left as a kill leaves them. Returns its pid.
pid_t claim_and_die(const fs::path& dir, const std::string& name) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto* s = new ScratchDir(dir, name);
    std::ofstream(s->path() / "half.o") << "x";
    ::_exit(0);
  }
  EXPECT_EQ(exit_code(pid), 0);
  return pid;
}

fs::path scratch_path(const fs::path& dir, const std::string& name, pid_t pid) {
  return dir / ("." + name + ".tmp" + std::to_string(pid));
}

}  // namespace

TEST(BuildProcess, ToolExitStatusAndOutput) {
  TempDir d;
  const fs::path out = d.p / "out.txt";
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(exit_code(start_tool({"sh", "-c", "echo said; echo warned >&2; exit 3"}, fd)), 3);
  EXPECT_EQ(exit_code(start_tool({"sh", "-c", "kill -9 $$"}, fd)), 128 + SIGKILL);
  EXPECT_EQ(exit_code(start_tool({"sh", "-c", "read x; echo \"[$x]\""}, fd)), 0);  // stdin is /dev/null
  ::close(fd);
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "said\nwarned\n[]\n");
  EXPECT_THROW(start_tool({"cuzk-no-such-tool"}, 1), WitnessError);
}

// The process that started a tool is killed: the tool and the child it started die too.
TEST(BuildProcess, ToolsDieWithTheirStarter) {
  int from_tool[2], to_test[2];
  ASSERT_EQ(::pipe(from_tool), 0);
  ASSERT_EQ(::pipe(to_test), 0);
  const pid_t starter = ::fork();
  if (starter == 0) {
    // The tool's child reports its pid, then both wait for ever; once it has, the starter passes
    // the pid on and is killed.
    start_tool({"sh", "-c", "sleep 1000 & echo $!; wait"}, from_tool[1]);
    std::string line;
    char c;
    while (::read(from_tool[0], &c, 1) == 1 && c != '\n') line += c;
    line += '\n';
    (void)!::write(to_test[1], line.data(), line.size());
    ::raise(SIGKILL);
  }
  for (int fd : {from_tool[0], from_tool[1], to_test[1]}) ::close(fd);
  std::string line;
  char c;
  while (::read(to_test[0], &c, 1) == 1 && c != '\n') line += c;
  ::close(to_test[0]);
  EXPECT_EQ(exit_code(starter), 128 + SIGKILL);
  ASSERT_FALSE(line.empty());
  const int fd = cuzk::open_pidfd(pid_t(std::stol(line)));
  if (fd < 0) {
    EXPECT_EQ(errno, ESRCH);  // gone already
    return;
  }
  pollfd pf{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&pf, 1, 60'000), 1) << "the tool's child outlived the process that started the tool";
  if (!pf.revents) cuzk::signal_pidfd(fd, SIGKILL);
  ::close(fd);
}

TEST(BuildProcess, SweepRemovesOnlyFoldersWhoseOwnerIsGone) {
  TempDir d;
  const pid_t dead = claim_and_die(d.p, "gen-a");
  ASSERT_TRUE(fs::exists(scratch_path(d.p, "gen-a", dead) / "half.o"));
  ASSERT_TRUE(fs::exists(scratch_path(d.p, "gen-a", dead).string() + ".lock"));

  // A live owner in another process (a second daemon or command line sharing the cache).
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  const pid_t other = ::fork();
  if (other == 0) {
    bool kept;
    {
      ScratchDir s(d.p, "gen-b");
      char c = 1;
      (void)!::write(ready[1], &c, 1);
      (void)!::read(done[0], &c, 1);
      kept = fs::exists(s.path());
    }
    ::_exit(kept ? 0 : 1);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  // And one in this process.
  ScratchDir mine(d.p, "gen-c");
  // A folder of an older cuzk (no lock) and names that are not scratch folders.
  for (const char* n : {".gen-d.tmp12", ".gen-e.tmp", "gen-f.tmp12", ".gen-g.tmp12x", ".gen-h.lock"})
    fs::create_directories(d.p / n);

  sweep_scratch(d.p);
  EXPECT_FALSE(fs::exists(scratch_path(d.p, "gen-a", dead)));
  EXPECT_FALSE(fs::exists(scratch_path(d.p, "gen-a", dead).string() + ".lock"));
  EXPECT_TRUE(fs::exists(scratch_path(d.p, "gen-b", other)));
  EXPECT_TRUE(fs::exists(mine.path()));
  for (const char* n : {".gen-d.tmp12", ".gen-e.tmp", "gen-f.tmp12", ".gen-g.tmp12x", ".gen-h.lock"})
    EXPECT_TRUE(fs::exists(d.p / n)) << n;

  c = 1;
  ASSERT_EQ(::write(done[1], &c, 1), 1);
  EXPECT_EQ(exit_code(other), 0);
  EXPECT_FALSE(fs::exists(scratch_path(d.p, "gen-b", other)));  // its owner removed it on the way out
  EXPECT_FALSE(fs::exists(scratch_path(d.p, "gen-b", other).string() + ".lock"));
  for (int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);
}

TEST(BuildProcess, ScratchIsEmptiedKeptOrRemoved) {
  TempDir d;
  // What a dead process of the same pid left is not taken for this one's work.
  const fs::path stale = scratch_path(d.p, "gen", ::getpid());
  fs::create_directories(stale);
  std::ofstream(stale / "old.o") << "x";
  {
    ScratchDir s(d.p, "gen");
    EXPECT_EQ(s.path(), stale);
    EXPECT_TRUE(fs::is_empty(s.path()));
    std::ofstream(s.path() / "new.o") << "x";
    fs::rename(s.path(), d.p / "gen");
    s.keep();
  }
  EXPECT_TRUE(fs::exists(d.p / "gen" / "new.o"));
  EXPECT_FALSE(fs::exists(stale.string() + ".lock"));
  {
    ScratchDir s(d.p / "deeper", "gen");  // its folder made as needed
    std::ofstream(s.path() / "new.o") << "x";
  }
  EXPECT_TRUE(fs::is_empty(d.p / "deeper"));
}
