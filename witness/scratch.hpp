// The folders a build fills before it renames them into place (<parent>/.<name>.tmp<pid>), each
// claimed by an flock(2) on <folder>.lock that its process holds until the folder is renamed or
// removed. The kernel drops the lock when the process dies, however it dies, so a folder whose lock
// can be taken is one that no process is filling any more: sweep_scratch removes those, and leaves
// alone those of live builds (another daemon or command line sharing the cache included).
#pragma once
#include <filesystem>
#include <string>

namespace cuzk::witness {

class ScratchDir {
 public:
  // Claims <parent>/.<name>.tmp<this pid> (its lock first, then the folder), emptied of what a dead
  // process of the same pid left. Throws WitnessError when it cannot be locked or created.
  ScratchDir(const std::filesystem::path& parent, const std::string& name);
  // Removes the folder, unless kept, then its lock.
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  // The folder has been renamed into place: it is not removed, only its lock.
  void keep() { kept_ = true; }

 private:
  std::filesystem::path dir_;
  int lock_fd_ = -1;
  bool kept_ = false;
};

// Removes the scratch folders in parent (and their locks) that no live process holds. Folders
// without a lock (made by an older cuzk) are left alone: nothing proves their owner gone.
void sweep_scratch(const std::filesystem::path& parent);

}  // namespace cuzk::witness
