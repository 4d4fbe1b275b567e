#include "core/ssh/keys.hpp"

#include "core/ssh/handles.hpp"
#include "core/ssh/private_key.hpp"
#include "core/text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace rv::proc {
namespace {

using ssh::CharPtr;
using ssh::HashPtr;
using ssh::KeyPtr;

std::string fingerprint_of(ssh_key key)
{
  unsigned char* raw_hash = nullptr;
  std::size_t length = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &raw_hash, &length) != 0) {
    return "?";
  }
  HashPtr hash(raw_hash);
  CharPtr text(ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash.get(), length));
  return text ? std::string(text.get()) : "?";
}

// `TYPE BASE64` of a public key ("" when libssh cannot export it).
std::string public_words(ssh_key key)
{
  char* raw = nullptr;
  if (ssh_pki_export_pubkey_base64(key, &raw) != SSH_OK) {
    return {};
  }
  CharPtr b64(raw);
  const char* type = ssh_key_type_to_char(ssh_key_type(key));
  return fmt::format("{} {}", type ? type : "?", b64.get());
}

// Writes `data` to a new file (O_EXCL) with `mode`.
Result<void> write_new_file(const std::string& path, const std::string& data, mode_t mode)
{
  ssh::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd) {
    return fail(ErrorCode::io, fmt::format("cannot create {}: {}", path, std::strerror(errno)),
                "check the directory's permissions; rv never overwrites a key");
  }
  std::string_view rest = data;
  while (!rest.empty()) {
    auto n = ::write(fd.get(), rest.data(), rest.size());
    if (n <= 0) {
      return fail(ErrorCode::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  ::fchmod(fd.get(), mode); // the umask may have taken bits the mode asked for
  if (!fd.close()) {
    return fail(ErrorCode::io, fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  return {};
}

} // namespace

std::optional<std::string> find_default_key(const std::string& ssh_dir)
{
  for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
    auto path = ssh_dir + "/" + name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      return path;
    }
  }
  return std::nullopt;
}

Result<KeyPair> read_key_pair(const std::string& private_path)
{
  KeyPair pair;
  pair.private_path = private_path;
  const auto pub_path = private_path + ".pub";
  ssh_key raw = nullptr;
  std::string comment;
  if (ssh_pki_import_pubkey_file(pub_path.c_str(), &raw) == SSH_OK) {
    std::ifstream in(pub_path);
    std::string line;
    std::getline(in, line);
    auto words = text::split_ws(line);
    if (words.size() > 2) {
      comment = line.substr(static_cast<std::size_t>(words[2].data() - line.data()));
    }
  } else if (ssh_pki_import_privkey_file(private_path.c_str(), nullptr, nullptr, nullptr, &raw) != SSH_OK) {
    return fail(ErrorCode::auth_failed,
                fmt::format("cannot read the key {} (and there is no {})", private_path, pub_path),
                "a key with a passphrase needs its .pub beside it (ssh-keygen -y -f KEY > KEY.pub), or pass -i KEY");
  }
  KeyPtr key(raw);
  pair.public_line = public_words(key.get());
  if (pair.public_line.empty()) {
    return fail(ErrorCode::auth_failed, fmt::format("cannot export the public key of {}", private_path));
  }
  if (!comment.empty()) {
    pair.public_line += " " + std::string(text::trim(comment));
  }
  const char* type = ssh_key_type_to_char(ssh_key_type(key.get()));
  pair.type = type ? type : "?";
  pair.fingerprint = fingerprint_of(key.get());
  return pair;
}

Result<KeyPair> generate_ed25519(const std::string& private_path, const std::string& comment,
                                 const std::string& passphrase)
{
  const auto dir = std::filesystem::path(private_path).parent_path();
  std::error_code ec;
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      return fail(ErrorCode::io, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    }
    ::chmod(dir.c_str(), 0700);
  }
  ssh_key raw = nullptr;
  if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &raw) != SSH_OK) {
    return fail(ErrorCode::io, "libssh could not generate an ed25519 key");
  }
  KeyPtr key(raw);
  char* raw_b64 = nullptr;
  if (ssh_pki_export_privkey_base64(key.get(), passphrase.empty() ? nullptr : passphrase.c_str(), nullptr, nullptr,
                                    &raw_b64) != SSH_OK) {
    return fail(ErrorCode::io, "libssh could not export the new key");
  }
  CharPtr private_text(raw_b64);
  std::string body(private_text.get());
  if (!body.ends_with("\n")) {
    body += "\n";
  }
  KeyPair pair;
  pair.private_path = private_path;
  pair.public_line = public_words(key.get()) + (comment.empty() ? "" : " " + comment);
  pair.type = "ssh-ed25519";
  pair.fingerprint = fingerprint_of(key.get());
  pair.generated = true;
  // The .pub first (N10): a stale .pub stops everything before a private key is written, so no
  // run ever leaves a private key beside a .pub of another key; a private key that cannot be
  // written takes its new .pub away again.
  RV_TRY_VOID(write_new_file(private_path + ".pub", pair.public_line + "\n", 0644));
  if (auto written = write_new_file(private_path, body, 0600); !written) {
    std::filesystem::remove(private_path + ".pub", ec);
    return std::unexpected(written.error());
  }
  return pair;
}

} // namespace rv::proc

namespace rv::proc::ssh {
namespace {

// libssh's passphrase callback while reading a key without one: notes that the file asked for a
// passphrase and gives none (libssh asks before its key derivation).
int note_passphrase_wanted(const char*, char*, std::size_t, int, int, void* userdata)
{
  *static_cast<bool*>(userdata) = true;
  return SSH_ERROR;
}

} // namespace

KeyFile read_private_key(const std::string& path, const char* passphrase, KeyPtr& out)
{
  ssh_key raw = nullptr;
  bool wanted = false;
  if (ssh_pki_import_privkey_file(path.c_str(), passphrase, passphrase ? nullptr : note_passphrase_wanted, &wanted,
                                  &raw) == SSH_OK) {
    out.reset(raw);
    return KeyFile::ok;
  }
  return wanted || passphrase ? KeyFile::locked : KeyFile::unreadable;
}

KeyPtr public_key_of(const std::string& path)
{
  ssh_key raw = nullptr;
  if (ssh_pki_import_pubkey_file((path + ".pub").c_str(), &raw) == SSH_OK ||
      ssh_pki_import_pubkey_file(path.c_str(), &raw) == SSH_OK) {
    return KeyPtr(raw);
  }
  return KeyPtr();
}

} // namespace rv::proc::ssh
