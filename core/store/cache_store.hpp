#pragma once
// A directory of small JSON documents that may be lost at any moment: rv's caches (the per-host
// static cluster facts, docs/discovery-cache.md). Reads never fail: a missing, unreadable or
// corrupt file is a miss (logged at debug level); writes are atomic (temp file, rename), never
// fsync'd: a cache torn by a crash reads as corrupt, which is a miss.

#include "core/result.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace rv::store {

class CacheStore {
public:
  // Uses `dir` (created 0700 on first write).
  explicit CacheStore(std::filesystem::path dir);

  // The document stored under `key`, or nullopt (absent, unreadable, not a JSON object).
  std::optional<nlohmann::json> read(const std::string& key) const;
  // Stores `doc` under `key` atomically (0600).
  Result<void> write(const std::string& key, const nlohmann::json& doc) const;
  // Deletes `key` (no error if absent).
  void remove(const std::string& key) const;

  const std::filesystem::path& dir() const { return m_dir; }

  // state_dir()/cache.
  static std::filesystem::path default_dir();

  // A file-safe key for any text (a host, a target): `<prefix>-<16 hex digits of FNV-1a 64>`.
  static std::string key_for(std::string_view prefix, std::string_view text);

private:
  std::filesystem::path m_dir;
};

} // namespace rv::store
