#include "core/ssh/hold_protocol.hpp"

#include "core/platform/platform.hpp"
#include "core/ssh/failures.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace rv::proc::hold {

std::string encode(Frame type, std::string_view payload)
{
  std::string frame;
  frame.reserve(5 + payload.size());
  frame.push_back(static_cast<char>(type));
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int shift = 24; shift >= 0; shift -= 8) {
    frame.push_back(static_cast<char>((n >> shift) & 0xffu));
  }
  frame.append(payload);
  return frame;
}

bool send_frame(int fd, Frame type, std::string_view payload)
{
  const auto frame = encode(type, payload);
  std::string_view rest = frame;
  while (!rest.empty()) {
    auto n = platform::send_nosignal(fd, rest.data(), rest.size(), 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

namespace {
constexpr std::string_view k_answer_lost = "the held connection ended after the command was sent: it may have run";
} // namespace

Error answer_lost(std::string_view label)
{
  return ssh_failure(ErrorCode::unreachable, label, k_answer_lost, {},
                     "check whether it ran before running it again (the next rv command starts a new held connection)");
}

bool is_answer_lost(const Error& e)
{
  return e.code == ErrorCode::unreachable && e.message.find(k_answer_lost) != std::string::npos;
}

Result<std::optional<Decoded>> decode(std::string& buffer)
{
  if (buffer.size() < 5) {
    return std::optional<Decoded>{};
  }
  std::uint32_t n = 0;
  for (int i = 1; i < 5; ++i) {
    n = (n << 8) | static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
  }
  if (n > k_max_frame) {
    return fail(ErrorCode::io, fmt::format("held connection: a frame of {} bytes (the limit is {})", n, k_max_frame));
  }
  if (buffer.size() < 5 + static_cast<std::size_t>(n)) {
    return std::optional<Decoded>{};
  }
  Decoded d{static_cast<Frame>(buffer[0]), buffer.substr(5, n)};
  buffer.erase(0, 5 + static_cast<std::size_t>(n));
  return std::optional<Decoded>{std::move(d)};
}

std::string error_payload(const Error& e)
{
  return nlohmann::json{{"code", static_cast<int>(e.code)}, {"message", e.message}, {"hint", e.hint}}.dump();
}

Error error_from_payload(std::string_view payload)
{
  auto j = nlohmann::json::parse(payload, nullptr, false);
  if (!j.is_object()) {
    return Error{ErrorCode::io, "held connection: an unreadable error frame", ""};
  }
  return Error{static_cast<ErrorCode>(j.value("code", static_cast<int>(ErrorCode::io))), j.value("message", ""),
               j.value("hint", "")};
}

std::optional<SocketFile> socket_file(const std::string& path)
{
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return SocketFile{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino)};
}

bool remove_own_socket(const std::string& path, const SocketFile& mine)
{
  const auto now = socket_file(path);
  if (!now || now->dev != mine.dev || now->ino != mine.ino) {
    return false; // gone, or another holder's socket now
  }
  return ::unlink(path.c_str()) == 0;
}

std::string runtime_dir(std::string_view xdg_runtime_dir, std::string_view state_dir)
{
  if (!xdg_runtime_dir.empty()) {
    return std::string(xdg_runtime_dir) + "/rv";
  }
  return std::string(state_dir) + "/hold";
}

namespace {

// FNV-1a: stable across builds and runs, unlike std::hash.
std::uint64_t options_hash(const SshOptions& o, std::string_view config_text)
{
  std::uint64_t h = 1469598103934665603ull;
  const auto add = [&h](std::string_view part) {
    for (char c : part) {
      h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
    h = (h ^ static_cast<unsigned char>('\n')) * 1099511628211ull;
  };
  for (const auto* part : {&o.destination, &o.ssh_config, &o.identity_file, &o.known_hosts, &o.ssh_dir}) {
    add(*part);
  }
  if (!o.known_hosts_fallback.empty()) { // likewise: the name of a holder without one is unchanged
    add("known_hosts_fallback=" + o.known_hosts_fallback);
  }
  if (!config_text.empty()) { // (an empty config hashes as before: no new name for every holder)
    add(config_text);
  }
  return h;
}

constexpr std::size_t k_sun_path = sizeof(sockaddr_un::sun_path); // 108 on Linux, 104 on macOS
constexpr std::size_t k_short_name = 16 + 5;                      // HASH.sock

} // namespace

bool sockets_fit(std::string_view dir)
{
  return dir.size() + 1 + k_short_name < k_sun_path;
}

std::string socket_in(std::string_view dir, const SshOptions& options, std::string_view config_text)
{
  auto path = fmt::format("{}/{}", dir, socket_name(options, config_text));
  if (path.size() < k_sun_path) {
    return path;
  }
  return fmt::format("{}/{:016x}.sock", dir, options_hash(options, config_text));
}

std::string socket_name(const SshOptions& o, std::string_view config_text)
{
  const auto h = options_hash(o, config_text);
  std::string safe;
  for (char c : o.destination.substr(0, 40)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '-' || c == '_' || c == '@';
    safe.push_back(ok ? c : '_');
  }
  return fmt::format("{}-{:016x}.sock", safe, h);
}

std::string socket_destination(std::string_view file_name)
{
  constexpr std::size_t hash_and_suffix = 1 + 16 + 5; // "-" HASH ".sock"
  if (file_name.size() <= hash_and_suffix || !file_name.ends_with(".sock")) {
    return {};
  }
  const auto dash = file_name.size() - hash_and_suffix;
  const auto hash = file_name.substr(dash + 1, 16);
  if (file_name[dash] != '-' ||
      !std::all_of(hash.begin(), hash.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); })) {
    return {};
  }
  return std::string(file_name.substr(0, dash));
}

} // namespace rv::proc::hold
