#pragma once
// OpenSSH user certificates (`<key>-cert.pub`, `CertificateFile`): what one says about itself.
// libssh 0.10 can log in with a certificate (ssh_pki_copy_cert_to_privkey) but tells nothing of
// its validity, so an expired one would only be "every key refused". Pure: no libssh, no I/O.

#include "core/result.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rv::proc {

struct CertInfo {
  std::string type;      // e.g. ssh-ed25519-cert-v01@openssh.com
  bool user_cert = true; // false: a host certificate
  std::string key_id;
  std::vector<std::string> principals; // empty: any user
  std::uint64_t valid_after = 0;
  std::uint64_t valid_before = UINT64_MAX; // UINT64_MAX: forever
};

// Reads a certificate's public line (`TYPE BASE64 [comment]`, as in `id_ed25519-cert.pub`).
Result<CertInfo> parse_certificate(std::string_view line);

// Why `cert` cannot log `user` in at `now` (seconds since the epoch): expired, not yet valid, a
// host certificate, or a certificate for other principals; "" when nothing is wrong with it.
std::string certificate_problem(const CertInfo& cert, std::int64_t now, std::string_view user);

} // namespace rv::proc
