#include "cli/commands.hpp"
#include "core/ssh/kerberos.hpp"

#include "rv_commit.hpp"

#include <fmt/format.h>

namespace rv::cli {

namespace {

// The machine the binary was built for, as a target triple (what the release tarball's name says).
std::string target_triple()
{
#if defined(__x86_64__)
  std::string triple = "x86_64";
#elif defined(__aarch64__)
  std::string triple = "aarch64";
#else
  std::string triple = "unknown";
#endif
#if defined(__linux__) && defined(__GLIBC__)
  triple += "-linux-gnu";
#elif defined(__linux__)
  triple += "-linux";
#elif defined(__APPLE__)
  triple += "-apple-darwin";
#else
  triple += "-unknown";
#endif
  return triple;
}

#if RV_STATIC_BINARY
constexpr bool static_binary = true;
#else
constexpr bool static_binary = false;
#endif

} // namespace

std::string version_text()
{
  const std::string type = RV_BUILD_TYPE;
  return fmt::format("{} (commit {}, {} build)", RV_VERSION, RV_COMMIT, type.empty() ? "default" : type);
}

std::vector<std::pair<std::string, std::string>> version_details()
{
  const auto& krb = proc::kerberos_support();
  std::string kerberos = krb.available ? fmt::format("yes ({})", krb.detail) : fmt::format("no ({})", krb.detail);
  return {{"built", RV_BUILD_DATE},
          {"target", target_triple()},
          {"linked", static_binary ? "static" : "dynamic"},
          {"kerberos", kerberos}};
}

std::string version_long_text()
{
  std::string out = fmt::format("rv {}\n", version_text());
  for (const auto& [key, value] : version_details()) {
    out += fmt::format("{}: {}\n", key, value);
  }
  return out;
}

} // namespace rv::cli
