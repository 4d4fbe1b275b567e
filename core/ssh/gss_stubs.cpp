// Kerberos for libssh: linked in the dynamic build. The static release binary (RV_STATIC_BINARY,
// cmake/RvStatic.cmake) has none: Debian's libssh.a calls 18 gss_* functions and 2 OIDs, Debian
// ships no static Kerberos, and a static glibc cannot load the system's libgssapi_krb5.so.2
// safely (measured: the dlopen aborts under glibc 2.31, dies of SIGFPE under 2.41, and under rv's
// own 2.36 the login crashes in krb5_cc_set_default_name: docs/ssh.md, "Kerberos in the static
// binary"). So here they are stubs that fail with GSS_S_UNAVAILABLE and say why; rv checks
// kerberos_support() before it asks libssh for GSSAPI, so the user sees one error line and a hint.

#include "core/ssh/kerberos.hpp"

#if RV_STATIC_BINARY

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

// RFC 2744's C types, as far as the stubs need them: every handle is a pointer, every status an
// unsigned 32-bit word (OM_uint32), a credential usage an int.
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

// The well-known name types (RFC 2744 4.1, 4.2), which libssh passes by value.
std::array<unsigned char, 10> hostbased_service_oid{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04};
std::array<unsigned char, 10> user_name_oid{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x01};
gss_OID_desc hostbased_service_desc{10, hostbased_service_oid.data()};
gss_OID_desc user_name_desc{10, user_name_oid.data()};

const rv::proc::KerberosSupport& support()
{
  static const rv::proc::KerberosSupport none{
      false, "this static rv has no Kerberos: a static glibc cannot load the system's libgssapi_krb5 safely",
      "use rv's .deb or a build from source, which link the system's Kerberos"};
  return none;
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

OM_uint32 gss_accept_sec_context(OM_uint32* minor, handle*, handle, gss_buffer_t, handle, handle*, gss_OID*,
                                 gss_buffer_t, OM_uint32*, OM_uint32*, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_acquire_cred(OM_uint32* minor, handle, OM_uint32, handle, int, handle*, handle*, OM_uint32*)
{
  return unavailable(minor);
}

OM_uint32 gss_add_oid_set_member(OM_uint32* minor, gss_OID, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_create_empty_oid_set(OM_uint32* minor, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_display_name(OM_uint32* minor, handle, gss_buffer_t, gss_OID*)
{
  return unavailable(minor);
}

// The reason, in a buffer gss_release_buffer frees.
OM_uint32 gss_display_status(OM_uint32* minor, OM_uint32, int, gss_OID, OM_uint32* more, gss_buffer_t out)
{
  if (more) {
    *more = 0;
  }
  if (out) {
    const std::string& text = support().detail;
    out->value = std::malloc(text.size() + 1);
    out->length = out->value ? text.size() : 0;
    if (out->value) {
      std::memcpy(out->value, text.c_str(), text.size() + 1);
    }
  }
  unavailable(minor);
  return 0;
}

OM_uint32 gss_get_mic(OM_uint32* minor, handle, OM_uint32, gss_buffer_t, gss_buffer_t)
{
  return unavailable(minor);
}

OM_uint32 gss_import_name(OM_uint32* minor, gss_buffer_t, gss_OID, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_indicate_mechs(OM_uint32* minor, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_init_sec_context(OM_uint32* minor, handle, handle*, handle, gss_OID, OM_uint32, OM_uint32, handle,
                               gss_buffer_t, gss_OID*, gss_buffer_t, OM_uint32*, OM_uint32*)
{
  return unavailable(minor);
}

OM_uint32 gss_inquire_cred(OM_uint32* minor, handle, handle*, OM_uint32*, int*, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_inquire_cred_by_mech(OM_uint32* minor, handle, gss_OID, handle*, OM_uint32*, OM_uint32*, int*)
{
  return unavailable(minor);
}

OM_uint32 gss_release_buffer(OM_uint32* minor, gss_buffer_t buffer)
{
  if (buffer) {
    std::free(buffer->value);
    buffer->value = nullptr;
    buffer->length = 0;
  }
  unavailable(minor);
  return 0;
}

OM_uint32 gss_release_cred(OM_uint32* minor, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_release_name(OM_uint32* minor, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_release_oid_set(OM_uint32* minor, handle*)
{
  return unavailable(minor);
}

OM_uint32 gss_test_oid_set_member(OM_uint32* minor, gss_OID, handle, int*)
{
  return unavailable(minor);
}

OM_uint32 gss_verify_mic(OM_uint32* minor, handle, gss_buffer_t, gss_buffer_t, OM_uint32*)
{
  return unavailable(minor);
}

} // extern "C"

namespace rv::proc {

const KerberosSupport& kerberos_support()
{
  return support();
}

} // namespace rv::proc

#else

namespace rv::proc {

const KerberosSupport& kerberos_support()
{
  static const KerberosSupport linked{true, "libgssapi_krb5, linked", ""};
  return linked;
}

} // namespace rv::proc

#endif
