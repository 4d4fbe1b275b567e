#include "core/store/cache_store.hpp"

#include "core/store/json_bytes.hpp"
#include "core/store/state_dir.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace rv::store {
namespace fs = std::filesystem;

namespace {

bool valid_key(const std::string& key)
{
  if (key.empty() || key.size() > 128 || key.front() == '.') {
    return false;
  }
  for (char c : key) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) {
      return false;
    }
  }
  return true;
}

} // namespace

CacheStore::CacheStore(fs::path dir) : m_dir(std::move(dir)) {}

fs::path CacheStore::default_dir()
{
  return state_dir() / "cache";
}

std::string CacheStore::key_for(std::string_view prefix, std::string_view text)
{
  std::uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a: stable across builds and machines
  for (char c : text) {
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  return fmt::format("{}-{:016x}", prefix, h);
}

std::optional<nlohmann::json> CacheStore::read(const std::string& key) const
{
  if (!valid_key(key)) {
    return std::nullopt;
  }
  const auto path = m_dir / (key + ".json");
  std::ifstream in(path);
  if (!in) {
    return std::nullopt; // a miss, the usual case
  }
  std::stringstream text;
  text << in.rdbuf();
  auto doc = parse_lossless(text.str());
  if (!doc || !doc->is_object()) {
    spdlog::debug("cache: ignoring {}: not a JSON object (torn or corrupt)", path.string());
    return std::nullopt;
  }
  return *doc;
}

Result<void> CacheStore::write(const std::string& key, const nlohmann::json& doc) const
{
  if (!valid_key(key)) {
    return fail(ErrorCode::generic, fmt::format("invalid cache key '{}'", key));
  }
  std::error_code ec;
  fs::create_directories(m_dir, ec);
  if (ec) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", m_dir.string(), ec.message()));
  }
  ::chmod(m_dir.c_str(), 0700);
  const auto path = m_dir / (key + ".json");
  auto tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  RV_TRY(text, dump_lossless(doc)); // any bytes a command printed survive
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorCode::io, fmt::format("cannot create {}", tmp.string()));
  }
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return fail(ErrorCode::io, fmt::format("cannot write {}", tmp.string()));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return fail(ErrorCode::io, fmt::format("cannot rename into {}", path.string()));
  }
  return {};
}

void CacheStore::remove(const std::string& key) const
{
  if (valid_key(key)) {
    std::error_code ec;
    fs::remove(m_dir / (key + ".json"), ec);
  }
}

} // namespace rv::store
