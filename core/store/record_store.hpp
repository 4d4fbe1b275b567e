#pragma once
// A directory of JSON records that survives rv being killed at any point and is safe with
// several rv processes at once: every write is atomic (temp file, fsync, rename, fsync dir)
// and every read-modify-write holds an exclusive lock.

#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace rv::store {

class RecordStore {
public:
  // Uses `dir` (created 0700 on first write).
  explicit RecordStore(std::filesystem::path dir);

  // Writes a new record `id`; fails if it exists already.
  Result<void> create(const std::string& id, const nlohmann::json& record);
  // Reads record `id`.
  Result<nlohmann::json> read(const std::string& id) const;
  // Applies `change` to record `id` under the store's lock and writes it back atomically;
  // returns the new record.
  Result<nlohmann::json> update(const std::string& id, const std::function<void(nlohmann::json&)>& change);
  // Reads every record, oldest id first; unreadable files are skipped with their names in `skipped`.
  Result<std::vector<nlohmann::json>> list(std::vector<std::string>* skipped = nullptr) const;
  // Deletes record `id` (no error if absent).
  Result<void> remove(const std::string& id);

  const std::filesystem::path& dir() const { return m_dir; }

  // Returns $XDG_STATE_HOME/rv/requests, or ~/.local/state/rv/requests.
  static std::filesystem::path default_dir();

private:
  std::filesystem::path path_of(const std::string& id) const;
  Result<void> ensure_dir() const;
  std::filesystem::path m_dir;
};

// Writes `data` to `path` atomically (0600), creating no partial file on any failure.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data);

// Holds an exclusive flock on a file until destroyed.
class FileLock {
public:
  static Result<FileLock> acquire(const std::filesystem::path& path);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

private:
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

// Returns a new request id: 8 lower-case hex digits from a random source, e.g. "3f9c02ab".
std::string new_request_id();

} // namespace rv::store
