#include "core/ssh/cert.hpp"

#include "core/base64.hpp"
#include "core/text.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <optional>

namespace rv::proc {
namespace {

// The SSH wire format's uint32, uint64 and string (PROTOCOL.certkeys), read front to back.
class Reader {
public:
  explicit Reader(std::string_view data) : m_rest(data) {}
  std::optional<std::uint64_t> integer(int bytes)
  {
    if (m_rest.size() < static_cast<std::size_t>(bytes)) {
      return std::nullopt;
    }
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value = (value << 8) | static_cast<unsigned char>(m_rest[static_cast<std::size_t>(i)]);
    }
    m_rest.remove_prefix(static_cast<std::size_t>(bytes));
    return value;
  }
  std::optional<std::string_view> string()
  {
    auto length = integer(4);
    if (!length || m_rest.size() < *length) {
      return std::nullopt;
    }
    auto value = m_rest.substr(0, *length);
    m_rest.remove_prefix(*length);
    return value;
  }
  bool empty() const { return m_rest.empty(); }

private:
  std::string_view m_rest;
};

// How many wire strings (or mpints) a certificate type's public key takes.
std::optional<int> key_fields(std::string_view type)
{
  if (type.starts_with("ssh-rsa-cert-")) {
    return 2; // e, n
  }
  if (type.starts_with("ssh-dss-cert-")) {
    return 4; // p, q, g, y
  }
  if (type.starts_with("ecdsa-sha2-")) {
    return 2; // curve, point
  }
  if (type.starts_with("ssh-ed25519-cert-")) {
    return 1;
  }
  if (type.starts_with("sk-ecdsa-sha2-")) {
    return 3; // curve, point, application
  }
  if (type.starts_with("sk-ssh-ed25519-cert-")) {
    return 2; // point, application
  }
  return std::nullopt;
}

std::string utc(std::uint64_t seconds)
{
  const auto t = static_cast<std::time_t>(std::min<std::uint64_t>(seconds, 253402300799ULL)); // 9999-12-31
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%d %H:%M} UTC", tm);
}

} // namespace

Result<CertInfo> parse_certificate(std::string_view line)
{
  auto bad = [](std::string_view why) {
    return fail(ErrorCode::config, fmt::format("not an OpenSSH certificate: {}", why));
  };
  const auto first_space = line.find_first_of(" \t");
  if (first_space == std::string_view::npos) {
    return bad("expected 'TYPE BASE64'");
  }
  const auto type = line.substr(0, first_space);
  auto rest = line.substr(first_space);
  rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
  const auto blob = base64_decode(rest.substr(0, rest.find_first_of(" \t\r\n")));
  if (!type.contains("-cert-v01@openssh.com") || !blob) {
    return bad(fmt::format("type '{}'", type));
  }
  Reader r(*blob);
  CertInfo cert;
  auto inner_type = r.string();
  const auto fields = inner_type ? key_fields(*inner_type) : std::nullopt;
  if (!inner_type || *inner_type != type || !fields || !r.string()) { // type, nonce
    return bad("its type and its data disagree");
  }
  cert.type = std::string(type);
  for (int i = 0; i < *fields; ++i) {
    if (!r.string()) {
      return bad("truncated key");
    }
  }
  const auto serial = r.integer(8);
  const auto kind = r.integer(4);
  const auto key_id = r.string();
  const auto principals = r.string();
  const auto after = r.integer(8);
  const auto before = r.integer(8);
  if (!serial || !kind || !key_id || !principals || !after || !before) {
    return bad("truncated");
  }
  cert.user_cert = *kind == 1;
  cert.key_id = std::string(*key_id);
  Reader names(*principals);
  while (!names.empty()) {
    auto name = names.string();
    if (!name) {
      return bad("bad principals");
    }
    cert.principals.emplace_back(*name);
  }
  cert.valid_after = *after;
  cert.valid_before = *before;
  return cert;
}

std::string certificate_problem(const CertInfo& cert, std::int64_t now, std::string_view user)
{
  const auto at = static_cast<std::uint64_t>(std::max<std::int64_t>(now, 0));
  if (!cert.user_cert) {
    return "it is a host certificate, not a user certificate";
  }
  if (at >= cert.valid_before) {
    return fmt::format("it expired on {}", utc(cert.valid_before));
  }
  if (at < cert.valid_after) {
    return fmt::format("it is not valid before {}", utc(cert.valid_after));
  }
  if (!user.empty() && !cert.principals.empty() && std::ranges::find(cert.principals, user) == cert.principals.end()) {
    return fmt::format("it is for {}, not for {}", text::join(cert.principals, ", "), user);
  }
  return {};
}

} // namespace rv::proc
