#pragma once
// A file's mode bits, mtime and inode (never following a link), and setting its mtime: for the
// tests that push real files and check what landed (unit/sync/).

#include <doctest/doctest.h>

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>

namespace rv::test {

struct FileStat {
  unsigned mode = 0;
  long long mtime = 0;
  ino_t inode = 0;
};

inline FileStat stat_of(const std::filesystem::path& p)
{
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return FileStat{static_cast<unsigned>(st.st_mode & 07777), static_cast<long long>(st.st_mtime), st.st_ino};
}

inline void set_mtime(const std::filesystem::path& p, long long secs)
{
  timespec times[2] = {{secs, 0}, {secs, 0}};
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW) == 0);
}

} // namespace rv::test
