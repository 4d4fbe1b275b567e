#pragma once
// Whether this rv can log in with a Kerberos ticket (GSSAPIAuthentication yes).
//
// The dynamic build (the .deb, a source build) links libgssapi_krb5 like any other library. The
// static release binary (RV_STATIC, cmake/RvStatic.cmake) has no Kerberos: gss_stubs.cpp answers
// libssh's GSSAPI calls with a failure, and says why (docs/ssh.md, "Kerberos in the static binary").

#include <string>

namespace rv::proc {

struct KerberosSupport {
  bool available = false;
  std::string detail; // "libgssapi_krb5, linked", or why there is none
  std::string hint;   // what to do when not available
};

const KerberosSupport& kerberos_support();

} // namespace rv::proc
