#pragma once
// The user's SSH key for `rv init`: found among the default names, or generated (ed25519) with
// libssh and written as OpenSSH writes it (private key 0600, `.pub` 0644, the directory 0700).

#include "core/result.hpp"

#include <optional>
#include <string>

namespace rv::proc {

struct KeyPair {
  std::string private_path;
  std::string public_line; // `ssh-ed25519 AAAA... comment`: one authorized_keys line
  std::string type;        // "ssh-ed25519"
  std::string fingerprint; // "SHA256:..."
  bool generated = false;
};

// The first of <ssh_dir>/id_ed25519, id_ecdsa, id_rsa that exists, as a path.
std::optional<std::string> find_default_key(const std::string& ssh_dir);

// The key at `private_path`, described by its `.pub` file (or, when that is missing, by the
// private key itself, which then must have no passphrase).
Result<KeyPair> read_key_pair(const std::string& private_path);

// Generates an ed25519 key at `private_path` (never overwriting a file) and its `.pub`, with
// `comment` on the public line; creates the directory 0700 when missing. A non-empty `passphrase`
// encrypts the private key (OpenSSH's format: bcrypt KDF, aes128-cbc; ssh-keygen reads it).
Result<KeyPair> generate_ed25519(const std::string& private_path, const std::string& comment,
                                 const std::string& passphrase = {});

} // namespace rv::proc
