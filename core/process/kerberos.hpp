#pragma once
// Whether this rv can log in with a Kerberos ticket (GSSAPIAuthentication yes).
//
// The dynamic build links libgssapi_krb5 like any other library. The static release binary
// (RV_STATIC, cmake/RvStatic.cmake) cannot: Debian ships no static Kerberos, so libssh's gss_*
// calls go through a bridge (gss_bridge.cpp) that loads the system's libgssapi_krb5.so.2 the
// first time Kerberos is asked for, and says why when it cannot (docs/ssh.md, "Kerberos in the
// static binary").

#include <string>

namespace rv::proc {

struct KerberosSupport {
  bool available = false;
  std::string detail; // "linked", "libgssapi_krb5.so.2 loaded at run time", or why not
  std::string hint;   // what to do when not available
};

// Loads the library on the first call in the static build (never at startup: `rv --help` stays
// fast); the answer is the same for the whole process.
const KerberosSupport& kerberos_support();

// True in the static release binary, where Kerberos is loaded at run time.
bool kerberos_loaded_at_run_time();

} // namespace rv::proc
