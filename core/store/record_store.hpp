#pragma once
// A directory of JSON records that survives rv being killed at any point and is safe with
// several rv processes at once: every write is atomic (temp file, fsync, rename, fsync dir)
// and every read-modify-write holds an exclusive lock.

#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::store {

// The record format this rv writes, stamped into every record as "schema". A record with a
// higher number comes from a newer rv: it is read by nobody here and never rewritten. 2 added
// optional fields (each job's prediction history; the re-fan-out history, docs/requests.md);
// records of schema 1 load as they are.
inline constexpr int k_record_schema = 2;

// Holds an exclusive flock on a file until destroyed.
class FileLock {
public:
  // `remove_on_release`: the file is deleted just before the lock is released.
  static Result<FileLock> acquire(const std::filesystem::path& path, bool remove_on_release = false);
  // As acquire, without waiting: nullopt when another process holds the lock.
  static Result<std::optional<FileLock>> try_acquire(const std::filesystem::path& path, bool remove_on_release = false);
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

private:
  static Result<std::optional<FileLock>> lock(const std::filesystem::path& path, bool wait, bool remove_on_release);
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
  std::filesystem::path m_remove; // empty: keep the file
};

class RecordStore {
public:
  // Uses `dir` (created 0700 on first write).
  explicit RecordStore(std::filesystem::path dir);

  // Writes a new record `id` (a JSON object); fails if it exists already. Strings that are not
  // UTF-8 are kept byte for byte (core/store/json_bytes.hpp).
  Result<void> create(const std::string& id, const nlohmann::json& record);
  // Reads record `id`: an error when it is not JSON, not an object, or from a newer rv.
  Result<nlohmann::json> read(const std::string& id) const;
  // Applies `change` to record `id` under the store's lock and writes it back atomically;
  // returns the new record.
  Result<nlohmann::json> update(const std::string& id, const std::function<void(nlohmann::json&)>& change);
  // Writes back a record that was read as `base` and changed in memory to `mine`: under the
  // lock, only what changed from `base` to `mine` is applied to the record as it is now, so a
  // concurrent writer's changes to other fields survive (three_way_merge).
  Result<nlohmann::json> merge(const std::string& id, const nlohmann::json& base, const nlohmann::json& mine);
  // Reads every record, oldest first (by "created_at", then id); a file that cannot be read is
  // skipped, with "NAME: why" in `skipped`.
  Result<std::vector<nlohmann::json>> list(std::vector<std::string>* skipped = nullptr) const;
  // Deletes record `id` (no error if absent).
  Result<void> remove(const std::string& id);
  // Marks record `id` as being submitted by this process until the returned lock is destroyed
  // (an flock on `.<id>.submitting`, removed on release): `rv ps` then leaves it to its owner.
  Result<FileLock> hold_submission(const std::string& id) const;
  // Whether a live process holds `id`'s submission (a record left `submitting` by a dead rv is not).
  bool submission_held(const std::string& id) const;
  // Serializes changes to request `id` that read the record, act on the cluster and save again (a
  // study's top-up and `rv stop`): an flock on `.<id>.changing`, blocking, kept on release (a file
  // removed while another process waits on it would let a third lock a new one beside it).
  Result<FileLock> hold_changes(const std::string& id) const;

  const std::filesystem::path& dir() const { return m_dir; }

  // state_dir()/requests.
  static std::filesystem::path default_dir();

private:
  std::filesystem::path path_of(const std::string& id) const;
  Result<void> ensure_dir() const;
  Result<void> write(const std::string& id, nlohmann::json record) const;
  std::filesystem::path m_dir;
};

// `theirs` with the changes from `base` to `mine` applied (pure): object members that `mine`
// changed, added or removed are set or erased in `theirs`, recursively. Arrays of objects that each
// carry a distinct string `element_key` member (a request's `jobs`, keyed by `strategy_id`) merge
// element by element, matched by it (N16: `rv stop` marking one job while `rv run -f` saves another
// keeps both); any other changed value replaces the one in `theirs`. Members `mine` left as in
// `base` keep their value from `theirs`.
nlohmann::json three_way_merge(const nlohmann::json& base, const nlohmann::json& mine, nlohmann::json theirs,
                               std::string_view element_key = "strategy_id");

// Writes `data` to `path` atomically (0600), creating no partial file on any failure.
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data);

// Returns a new request id: 8 lower-case hex digits from a random source, e.g. "3f9c02ab".
std::string new_request_id();

} // namespace rv::store
