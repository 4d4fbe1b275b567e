// Kerberos for libssh: linked in the dynamic build; in the static release binary (RV_STATIC_BINARY,
// cmake/RvStatic.cmake) the 18 gss_* functions and 2 OIDs libssh.a needs, forwarded to the
// system's libgssapi_krb5.so.2, loaded with dlopen the first time one is called (docs/ssh.md,
// "Kerberos in the static binary"). Without the library every call fails with GSS_S_UNAVAILABLE
// and the reason; rv checks kerberos_support() before it asks libssh for GSSAPI, so the user
// sees one error line with a hint instead.

#include "core/process/kerberos.hpp"

#if RV_STATIC_BINARY

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <gnu/libc-version.h>
#include <iterator>
#include <mutex>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

// RFC 2744's C types, as far as a forwarder needs them: every handle is a pointer, every status
// an unsigned 32-bit word (OM_uint32), a credential usage an int.
using OM_uint32 = std::uint32_t;
struct gss_OID_desc {
  OM_uint32 length;
  void* elements;
};
struct gss_buffer_desc {
  std::size_t length;
  void* value;
};
using gss_OID = gss_OID_desc*;
using gss_buffer_t = gss_buffer_desc*;
using handle = void*; // gss_name_t, gss_cred_id_t, gss_ctx_id_t, gss_OID_set, gss_channel_bindings_t

constexpr OM_uint32 gss_s_unavailable = 16U << 16; // GSS_S_UNAVAILABLE: a routine error

// The well-known name types (RFC 2744 4.1, 4.2): libssh passes them by value to gss_import_name,
// so they must exist before the library is loaded; the mechanisms compare OIDs by content.
std::array<unsigned char, 10> hostbased_service_oid{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04};
std::array<unsigned char, 10> user_name_oid{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x01};
gss_OID_desc hostbased_service_desc{10, hostbased_service_oid.data()};
gss_OID_desc user_name_desc{10, user_name_oid.data()};

// The functions, in one table: name and the resolved address.
enum Fn : std::size_t {
  accept_sec_context,
  acquire_cred,
  add_oid_set_member,
  create_empty_oid_set,
  display_name,
  display_status,
  get_mic,
  import_name,
  indicate_mechs,
  init_sec_context,
  inquire_cred,
  inquire_cred_by_mech,
  release_buffer,
  release_cred,
  release_name,
  release_oid_set,
  test_oid_set_member,
  verify_mic,
  fn_count
};
constexpr std::array<const char*, fn_count> fn_names{"gss_accept_sec_context",
                                                     "gss_acquire_cred",
                                                     "gss_add_oid_set_member",
                                                     "gss_create_empty_oid_set",
                                                     "gss_display_name",
                                                     "gss_display_status",
                                                     "gss_get_mic",
                                                     "gss_import_name",
                                                     "gss_indicate_mechs",
                                                     "gss_init_sec_context",
                                                     "gss_inquire_cred",
                                                     "gss_inquire_cred_by_mech",
                                                     "gss_release_buffer",
                                                     "gss_release_cred",
                                                     "gss_release_name",
                                                     "gss_release_oid_set",
                                                     "gss_test_oid_set_member",
                                                     "gss_verify_mic"};

struct Bridge {
  std::array<void*, fn_count> fns{};
  rv::proc::KerberosSupport support;
};

// Where system libraries live: LD_LIBRARY_PATH, then Debian's multiarch and RHEL's lib64
// directories (a static binary's loader has no ld.so.cache of its own to trust).
std::vector<std::string> library_dirs()
{
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("LD_LIBRARY_PATH")) {
    std::string list = env;
    for (std::size_t start = 0; start <= list.size();) {
      const auto colon = std::min(list.find(':', start), list.size());
      if (colon > start) {
        dirs.push_back(list.substr(start, colon - start));
      }
      start = colon + 1;
    }
  }
#if defined(__aarch64__)
  constexpr const char* multiarch = "aarch64-linux-gnu";
#else
  constexpr const char* multiarch = "x86_64-linux-gnu";
#endif
  for (const char* prefix : {"/lib/", "/usr/lib/"}) {
    dirs.push_back(std::string(prefix) + multiarch);
  }
  for (const char* dir : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) {
    dirs.emplace_back(dir);
  }
  return dirs;
}

std::string find_library(const std::string& name)
{
  for (const auto& dir : library_dirs()) {
    const std::string path = dir + "/" + name;
    if (::access(path.c_str(), R_OK) == 0) {
      return path;
    }
  }
  return {};
}

// The system glibc's version, from the banner every libc.so.6 carries ("... release version
// 2.31."), without loading it: "" when there is none or it cannot be read.
std::string system_glibc_version()
{
  const std::string path = find_library("libc.so.6");
  std::ifstream in(path, std::ios::binary);
  if (path.empty() || !in) {
    return {};
  }
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  constexpr std::string_view marker = "release version ";
  const auto at = bytes.find(marker);
  if (at == std::string::npos) {
    return {};
  }
  std::string version;
  for (std::size_t i = at + marker.size(); i < bytes.size() && version.size() < 16; ++i) {
    const char c = bytes[i];
    if (!std::isdigit(static_cast<unsigned char>(c)) &&
        !(c == '.' && i + 1 < bytes.size() && std::isdigit(static_cast<unsigned char>(bytes[i + 1])))) {
      break;
    }
    version += c;
  }
  return version;
}

// The library is loaded only where that is safe. A static glibc's dlopen loads the system's
// libc.so.6 beside its own and needs it to be the same release (the linker says so; measured:
// glibc 2.31's makes the dlopen abort the process, docs/ssh.md), so a system with another glibc
// gets a clear "no" instead of a crash.
Bridge load()
{
  Bridge b;
  const std::string ours = ::gnu_get_libc_version();
  b.support.hint = "use rv's .deb or a build from source, which link the system's Kerberos";
  const std::string lib_path = find_library("libgssapi_krb5.so.2");
  if (lib_path.empty()) {
    b.support.detail = "libgssapi_krb5.so.2 is not installed";
    b.support.hint = "install it (Debian/Ubuntu: libgssapi-krb5-2, RHEL: krb5-libs) on a glibc " + ours +
                     " system, or " + b.support.hint;
    return b;
  }
  const std::string theirs = system_glibc_version();
  if (theirs != ours) {
    b.support.detail = fmt::format("the system's glibc is {}, and a static rv can load its {} only with glibc {}",
                                   theirs.empty() ? "of unknown version" : theirs, lib_path, ours);
    return b;
  }
  void* lib = ::dlopen(lib_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = ::dlerror();
    b.support.detail = fmt::format("{} cannot be loaded ({})", lib_path, err ? err : "no reason given");
    return b;
  }
  for (std::size_t i = 0; i < fn_count; ++i) {
    b.fns[i] = ::dlsym(lib, fn_names[i]);
    if (!b.fns[i]) {
      b.support.detail = fmt::format("{} has no {}", lib_path, fn_names[i]);
      return b;
    }
  }
  b.support.available = true;
  b.support.detail = lib_path + ", loaded at run time";
  b.support.hint.clear();
  return b;
}

const Bridge& bridge()
{
  static std::once_flag once;
  static Bridge b;
  std::call_once(once, [] { b = load(); });
  return b;
}

// The resolved function Fn with signature F, or null when Kerberos is not available.
template <typename F>
F* fn(Fn which)
{
  const Bridge& b = bridge();
  return b.support.available ? reinterpret_cast<F*>(b.fns[which]) : nullptr;
}

OM_uint32 unavailable(OM_uint32* minor)
{
  if (minor) {
    *minor = 0;
  }
  return gss_s_unavailable;
}

} // namespace

extern "C" {

gss_OID GSS_C_NT_HOSTBASED_SERVICE = &hostbased_service_desc;
gss_OID GSS_C_NT_USER_NAME = &user_name_desc;

OM_uint32 gss_accept_sec_context(OM_uint32* minor, handle* ctx, handle cred, gss_buffer_t in, handle cb, handle* src,
                                 gss_OID* mech, gss_buffer_t out, OM_uint32* flags, OM_uint32* time, handle* deleg)
{
  using F = OM_uint32(OM_uint32*, handle*, handle, gss_buffer_t, handle, handle*, gss_OID*, gss_buffer_t, OM_uint32*,
                      OM_uint32*, handle*);
  auto* f = fn<F>(accept_sec_context);
  return f ? f(minor, ctx, cred, in, cb, src, mech, out, flags, time, deleg) : unavailable(minor);
}

OM_uint32 gss_acquire_cred(OM_uint32* minor, handle name, OM_uint32 time_req, handle mechs, int usage, handle* cred,
                           handle* actual, OM_uint32* time)
{
  using F = OM_uint32(OM_uint32*, handle, OM_uint32, handle, int, handle*, handle*, OM_uint32*);
  auto* f = fn<F>(acquire_cred);
  return f ? f(minor, name, time_req, mechs, usage, cred, actual, time) : unavailable(minor);
}

OM_uint32 gss_add_oid_set_member(OM_uint32* minor, gss_OID member, handle* set)
{
  using F = OM_uint32(OM_uint32*, gss_OID, handle*);
  auto* f = fn<F>(add_oid_set_member);
  return f ? f(minor, member, set) : unavailable(minor);
}

OM_uint32 gss_create_empty_oid_set(OM_uint32* minor, handle* set)
{
  using F = OM_uint32(OM_uint32*, handle*);
  auto* f = fn<F>(create_empty_oid_set);
  return f ? f(minor, set) : unavailable(minor);
}

OM_uint32 gss_display_name(OM_uint32* minor, handle name, gss_buffer_t out, gss_OID* type)
{
  using F = OM_uint32(OM_uint32*, handle, gss_buffer_t, gss_OID*);
  auto* f = fn<F>(display_name);
  return f ? f(minor, name, out, type) : unavailable(minor);
}

// Without the library: the reason, in a buffer of our own (freed by our gss_release_buffer).
OM_uint32 gss_display_status(OM_uint32* minor, OM_uint32 status, int type, gss_OID mech, OM_uint32* more,
                             gss_buffer_t out)
{
  using F = OM_uint32(OM_uint32*, OM_uint32, int, gss_OID, OM_uint32*, gss_buffer_t);
  if (auto* f = fn<F>(display_status)) {
    return f(minor, status, type, mech, more, out);
  }
  if (minor) {
    *minor = 0;
  }
  if (more) {
    *more = 0;
  }
  if (out) {
    const std::string& text = bridge().support.detail;
    out->value = std::malloc(text.size() + 1);
    out->length = out->value ? text.size() : 0;
    if (out->value) {
      std::memcpy(out->value, text.c_str(), text.size() + 1);
    }
  }
  return 0;
}

OM_uint32 gss_get_mic(OM_uint32* minor, handle ctx, OM_uint32 qop, gss_buffer_t msg, gss_buffer_t token)
{
  using F = OM_uint32(OM_uint32*, handle, OM_uint32, gss_buffer_t, gss_buffer_t);
  auto* f = fn<F>(get_mic);
  return f ? f(minor, ctx, qop, msg, token) : unavailable(minor);
}

OM_uint32 gss_import_name(OM_uint32* minor, gss_buffer_t in, gss_OID type, handle* out)
{
  using F = OM_uint32(OM_uint32*, gss_buffer_t, gss_OID, handle*);
  auto* f = fn<F>(import_name);
  return f ? f(minor, in, type, out) : unavailable(minor);
}

OM_uint32 gss_indicate_mechs(OM_uint32* minor, handle* set)
{
  using F = OM_uint32(OM_uint32*, handle*);
  auto* f = fn<F>(indicate_mechs);
  return f ? f(minor, set) : unavailable(minor);
}

OM_uint32 gss_init_sec_context(OM_uint32* minor, handle cred, handle* ctx, handle target, gss_OID mech,
                               OM_uint32 req_flags, OM_uint32 time_req, handle cb, gss_buffer_t in,
                               gss_OID* actual_mech, gss_buffer_t out, OM_uint32* flags, OM_uint32* time)
{
  using F = OM_uint32(OM_uint32*, handle, handle*, handle, gss_OID, OM_uint32, OM_uint32, handle, gss_buffer_t,
                      gss_OID*, gss_buffer_t, OM_uint32*, OM_uint32*);
  auto* f = fn<F>(init_sec_context);
  return f ? f(minor, cred, ctx, target, mech, req_flags, time_req, cb, in, actual_mech, out, flags, time)
           : unavailable(minor);
}

OM_uint32 gss_inquire_cred(OM_uint32* minor, handle cred, handle* name, OM_uint32* lifetime, int* usage, handle* mechs)
{
  using F = OM_uint32(OM_uint32*, handle, handle*, OM_uint32*, int*, handle*);
  auto* f = fn<F>(inquire_cred);
  return f ? f(minor, cred, name, lifetime, usage, mechs) : unavailable(minor);
}

OM_uint32 gss_inquire_cred_by_mech(OM_uint32* minor, handle cred, gss_OID mech, handle* name, OM_uint32* init_life,
                                   OM_uint32* accept_life, int* usage)
{
  using F = OM_uint32(OM_uint32*, handle, gss_OID, handle*, OM_uint32*, OM_uint32*, int*);
  auto* f = fn<F>(inquire_cred_by_mech);
  return f ? f(minor, cred, mech, name, init_life, accept_life, usage) : unavailable(minor);
}

OM_uint32 gss_release_buffer(OM_uint32* minor, gss_buffer_t buffer)
{
  using F = OM_uint32(OM_uint32*, gss_buffer_t);
  if (auto* f = fn<F>(release_buffer)) {
    return f(minor, buffer);
  }
  if (minor) {
    *minor = 0;
  }
  if (buffer) {
    std::free(buffer->value);
    buffer->value = nullptr;
    buffer->length = 0;
  }
  return 0;
}

OM_uint32 gss_release_cred(OM_uint32* minor, handle* cred)
{
  using F = OM_uint32(OM_uint32*, handle*);
  auto* f = fn<F>(release_cred);
  return f ? f(minor, cred) : unavailable(minor);
}

OM_uint32 gss_release_name(OM_uint32* minor, handle* name)
{
  using F = OM_uint32(OM_uint32*, handle*);
  auto* f = fn<F>(release_name);
  return f ? f(minor, name) : unavailable(minor);
}

OM_uint32 gss_release_oid_set(OM_uint32* minor, handle* set)
{
  using F = OM_uint32(OM_uint32*, handle*);
  auto* f = fn<F>(release_oid_set);
  return f ? f(minor, set) : unavailable(minor);
}

OM_uint32 gss_test_oid_set_member(OM_uint32* minor, gss_OID member, handle set, int* present)
{
  using F = OM_uint32(OM_uint32*, gss_OID, handle, int*);
  auto* f = fn<F>(test_oid_set_member);
  return f ? f(minor, member, set, present) : unavailable(minor);
}

OM_uint32 gss_verify_mic(OM_uint32* minor, handle ctx, gss_buffer_t msg, gss_buffer_t token, OM_uint32* qop)
{
  using F = OM_uint32(OM_uint32*, handle, gss_buffer_t, gss_buffer_t, OM_uint32*);
  auto* f = fn<F>(verify_mic);
  return f ? f(minor, ctx, msg, token, qop) : unavailable(minor);
}

} // extern "C"

namespace rv::proc {

const KerberosSupport& kerberos_support()
{
  return bridge().support;
}

bool kerberos_loaded_at_run_time()
{
  return true;
}

} // namespace rv::proc

#else

namespace rv::proc {

const KerberosSupport& kerberos_support()
{
  static const KerberosSupport linked{true, "libgssapi_krb5, linked", ""};
  return linked;
}

bool kerberos_loaded_at_run_time()
{
  return false;
}

} // namespace rv::proc

#endif
