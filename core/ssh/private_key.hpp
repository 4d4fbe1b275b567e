#pragma once
// Reading a private key file that may have a passphrase, for the login (core/ssh/session_auth.cpp):
// whether it has one is learnt before libssh's key derivation, so checking costs no time. Internal
// to core/ssh (libssh types); tests/unit/core/ssh/test_private_key.cpp.

#include "core/ssh/handles.hpp"

#include <string>

namespace rv::proc::ssh {

// How a private key file reads: `locked` = it has a passphrase and none (or a wrong one) was given.
enum class KeyFile { ok, locked, unreadable };

// Reads `path` with `passphrase` (nullptr: none) into `out` when it opens.
KeyFile read_private_key(const std::string& path, const char* passphrase, KeyPtr& out);

// The public half of a key file: its `.pub`, else the public part an OpenSSH-format private key
// keeps unencrypted; null when neither reads (an old PEM key without its .pub).
KeyPtr public_key_of(const std::string& path);

} // namespace rv::proc::ssh
