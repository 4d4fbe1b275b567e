#include "core/store/record_store.hpp"

#include "core/random.hpp"
#include "core/store/json_bytes.hpp"
#include "core/store/lock_probe.hpp"
#include "core/store/state_dir.hpp"
#include "core/store/temp_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rv::store {
namespace fs = std::filesystem;
namespace {

Error io_error(const std::string& what, const fs::path& path)
{
  return Error{ErrorCode::io, fmt::format("{} {}: {}", what, path.string(), std::strerror(errno)),
               "check the permissions and free space of rv's state directory"};
}

bool valid_id(const std::string& id)
{
  return !id.empty() && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

bool write_all(int fd, std::string_view data)
{
  while (!data.empty()) {
    auto n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

} // namespace

Result<TempFile> create_temp_beside(const fs::path& path)
{
  TempFile t;
  t.path = path;
  t.path += ".tmp." + random_hex(8);
  t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (t.fd < 0) {
    return std::unexpected(io_error("cannot create", t.path));
  }
  return t;
}

Result<void> write_file_atomic(const fs::path& path, std::string_view data)
{
  // A random name created exclusively, never through a symlink: the directory may be one others
  // can write (`rv ssh --config --install --file DIR/x`, N13).
  RV_TRY(created, create_temp_beside(path));
  const int fd = created.fd;
  const auto& tmp = created.path;
  if (!write_all(fd, data) || ::fsync(fd) != 0) {
    auto err = io_error("cannot write", tmp);
    ::close(fd);
    ::unlink(tmp.c_str());
    return std::unexpected(err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto err = io_error("cannot rename into", path);
    ::unlink(tmp.c_str());
    return std::unexpected(err);
  }
  // The rename is durable only once the directory entry is on disk.
  int dir = ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

Result<std::optional<FileLock>> FileLock::lock(const fs::path& path, bool wait, bool remove_on_release)
{
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return std::unexpected(io_error("cannot open lock", path));
  }
  while (::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
    if (!wait && errno == EWOULDBLOCK) {
      ::close(fd);
      return std::optional<FileLock>();
    }
    if (errno != EINTR) {
      auto err = io_error("cannot lock", path);
      ::close(fd);
      return std::unexpected(err);
    }
  }
  FileLock held(fd);
  if (remove_on_release) {
    held.m_remove = path;
  }
  return std::optional<FileLock>(std::move(held));
}

Result<FileLock> FileLock::acquire(const fs::path& path, bool remove_on_release)
{
  RV_TRY(held, lock(path, true, remove_on_release));
  return std::move(*held);
}

Result<std::optional<FileLock>> FileLock::try_acquire(const fs::path& path, bool remove_on_release)
{
  return lock(path, false, remove_on_release);
}

FileLock::FileLock(FileLock&& other) noexcept : m_fd(other.m_fd), m_remove(std::move(other.m_remove))
{
  other.m_fd = -1;
}

FileLock::~FileLock()
{
  if (m_fd >= 0) {
    if (!m_remove.empty()) {
      ::unlink(m_remove.c_str()); // before the release: a later holder locks a new file
    }
    ::close(m_fd); // releases the flock
  }
}

RecordStore::RecordStore(fs::path dir) : m_dir(std::move(dir)) {}

fs::path RecordStore::default_dir()
{
  return state_dir() / "requests";
}

fs::path RecordStore::path_of(const std::string& id) const
{
  return m_dir / (id + ".json");
}

Result<void> RecordStore::ensure_dir() const
{
  std::error_code ec;
  fs::create_directories(m_dir, ec);
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", m_dir.string(), ec.message()));
  }
  ::chmod(m_dir.c_str(), 0700);
  return {};
}

Result<void> RecordStore::write(const std::string& id, nlohmann::json record) const
{
  record["schema"] = k_record_schema;
  RV_TRY(text, dump_lossless(record));
  return write_file_atomic(path_of(id), text);
}

Result<void> RecordStore::create(const std::string& id, const nlohmann::json& record)
{
  if (!valid_id(id)) {
    return fail(ErrorCode::usage, fmt::format("invalid record id '{}'", id));
  }
  if (!record.is_object()) {
    return fail(ErrorCode::generic, fmt::format("record {} is not a JSON object", id));
  }
  RV_TRY_VOID(ensure_dir());
  RV_TRY(lock, FileLock::acquire(m_dir / ".lock"));
  if (fs::exists(path_of(id))) {
    return fail(ErrorCode::io, fmt::format("record {} exists already in {}", id, m_dir.string()));
  }
  return write(id, record);
}

Result<nlohmann::json> RecordStore::read(const std::string& id) const
{
  if (!valid_id(id)) {
    return fail(ErrorCode::usage, fmt::format("invalid record id '{}'", id));
  }
  std::ifstream in(path_of(id));
  if (!in) {
    return fail(ErrorCode::io, fmt::format("no record {} in {}", id, m_dir.string()), "`rv ps -a` lists requests");
  }
  std::stringstream text;
  text << in.rdbuf();
  auto doc = parse_lossless(text.str());
  if (!doc) {
    return fail(ErrorCode::parse, fmt::format("record {} is corrupt: {}", path_of(id).string(), doc.error().message),
                "move it aside; rv skips it meanwhile");
  }
  if (!doc->is_object()) {
    return fail(ErrorCode::parse, fmt::format("record {} is corrupt: not a JSON object", path_of(id).string()),
                "move it aside; rv skips it meanwhile");
  }
  const auto schema = doc->find("schema");
  if (schema != doc->end() && (!schema->is_number_integer() || schema->get<std::int64_t>() > k_record_schema)) {
    return fail(ErrorCode::config,
                fmt::format("record {} was written by a newer rv (schema {}; this rv knows {})", path_of(id).string(),
                            schema->dump(), k_record_schema),
                "upgrade rv to act on it; this rv leaves it untouched");
  }
  return std::move(*doc);
}

Result<nlohmann::json> RecordStore::update(const std::string& id, const std::function<void(nlohmann::json&)>& change)
{
  RV_TRY_VOID(ensure_dir());
  RV_TRY(lock, FileLock::acquire(m_dir / ".lock"));
  RV_TRY(record, read(id));
  change(record);
  RV_TRY_VOID(write(id, record));
  return record;
}

Result<nlohmann::json> RecordStore::merge(const std::string& id, const nlohmann::json& base, const nlohmann::json& mine)
{
  return update(id, [&](nlohmann::json& now) { now = three_way_merge(base, mine, std::move(now)); });
}

Result<std::vector<nlohmann::json>> RecordStore::list(std::vector<std::string>* skipped) const
{
  std::vector<std::pair<std::string, nlohmann::json>> found;
  std::error_code ec;
  if (!fs::exists(m_dir, ec)) {
    return std::vector<nlohmann::json>{};
  }
  for (const auto& entry : fs::directory_iterator(m_dir, ec)) {
    const auto name = entry.path().filename().string();
    if (entry.path().extension() != ".json") {
      continue; // lock file and temp files of writers in flight
    }
    auto id = name.substr(0, name.size() - 5);
    auto record = read(id);
    if (record) {
      found.emplace_back(id, std::move(*record));
    } else if (skipped) {
      skipped->push_back(fmt::format("{}: {}", name, record.error().message));
    }
  }
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot list {}: {}", m_dir.string(), ec.message()));
  }
  auto created = [](const nlohmann::json& r) {
    auto it = r.find("created_at");
    return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) {
    auto ta = created(a.second);
    auto tb = created(b.second);
    return ta != tb ? ta < tb : a.first < b.first;
  });
  std::vector<nlohmann::json> records;
  records.reserve(found.size());
  for (auto& [id, rec] : found) {
    records.push_back(std::move(rec));
  }
  return records;
}

namespace {

// Whether `a` is an array of objects that each carry a distinct string member `key`.
bool keyed_array(const nlohmann::json& a, std::string_view key)
{
  if (!a.is_array() || key.empty()) {
    return false;
  }
  std::vector<std::string> seen;
  for (const auto& e : a) {
    auto it = e.is_object() ? e.find(key) : e.end();
    if (!e.is_object() || it == e.end() || !it->is_string()) {
      return false;
    }
    if (std::find(seen.begin(), seen.end(), it->get<std::string>()) != seen.end()) {
      return false;
    }
    seen.push_back(it->get<std::string>());
  }
  return true;
}

nlohmann::json* find_keyed(nlohmann::json& a, std::string_view key, const nlohmann::json& id)
{
  for (auto& e : a) {
    if (e[key] == id) {
      return &e;
    }
  }
  return nullptr;
}

// Element-wise merge of keyed arrays (N16): each element of `mine` that changed since `base` is
// merged into the element of `theirs` with the same key; elements only `mine` added are appended,
// elements `mine` removed are removed; the rest of `theirs` (its order, its additions) stays.
nlohmann::json merge_keyed(const nlohmann::json& base, const nlohmann::json& mine, nlohmann::json theirs,
                           std::string_view key)
{
  nlohmann::json base_copy = base;
  for (const auto& m : mine) {
    const auto& id = m[key];
    const auto* b = find_keyed(base_copy, key, id);
    if (b && *b == m) {
      continue; // unchanged here: keep theirs
    }
    if (auto* t = find_keyed(theirs, key, id)) {
      *t = b ? three_way_merge(*b, m, *t, key) : m;
    } else if (!b) {
      theirs.push_back(m); // added here
    }                      // else removed there while changed here: theirs wins
  }
  for (const auto& b : base) {
    const auto& id = b[key];
    const bool kept = std::any_of(mine.begin(), mine.end(), [&](const nlohmann::json& m) { return m[key] == id; });
    if (!kept) {
      theirs.erase(std::remove_if(theirs.begin(), theirs.end(), [&](const nlohmann::json& t) { return t[key] == id; }),
                   theirs.end());
    }
  }
  return theirs;
}

} // namespace

nlohmann::json three_way_merge(const nlohmann::json& base, const nlohmann::json& mine, nlohmann::json theirs,
                               std::string_view element_key)
{
  if (keyed_array(base, element_key) && keyed_array(mine, element_key) && keyed_array(theirs, element_key)) {
    return merge_keyed(base, mine, std::move(theirs), element_key);
  }
  if (!base.is_object() || !mine.is_object() || !theirs.is_object()) {
    return mine == base ? theirs : mine;
  }
  for (const auto& [key, value] : mine.items()) {
    auto b = base.find(key);
    if (b != base.end() && *b == value) {
      continue; // unchanged here: keep theirs
    }
    auto t = theirs.find(key);
    if (b != base.end() && t != theirs.end()) {
      theirs[key] = three_way_merge(*b, value, *t, element_key);
    } else {
      theirs[key] = value;
    }
  }
  for (const auto& [key, value] : base.items()) {
    if (!mine.contains(key)) {
      theirs.erase(key);
    }
  }
  return theirs;
}

Result<void> RecordStore::remove(const std::string& id)
{
  if (!valid_id(id)) {
    return fail(ErrorCode::usage, fmt::format("invalid record id '{}'", id));
  }
  RV_TRY(lock, FileLock::acquire(m_dir / ".lock"));
  std::error_code ec;
  fs::remove(path_of(id), ec);
  return {};
}

std::string new_request_id()
{
  return random_hex(4);
}

Result<FileLock> RecordStore::hold_submission(const std::string& id) const
{
  RV_TRY_VOID(ensure_dir());
  return FileLock::acquire(m_dir / ("." + id + ".submitting"), true);
}

Result<FileLock> RecordStore::hold_changes(const std::string& id) const
{
  RV_TRY_VOID(ensure_dir());
  return FileLock::acquire(m_dir / ("." + id + ".changing"), false);
}

bool RecordStore::submission_held(const std::string& id) const
{
  return lock_held(m_dir / ("." + id + ".submitting"));
}

} // namespace rv::store
