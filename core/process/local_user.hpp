#pragma once
// The local user's name and home directory, and glibc's name services made safe for the static
// release binary (RV_STATIC_BINARY, cmake/RvStatic.cmake).
//
// A static glibc still reads /etc/nsswitch.conf and dlopens the modules it names (systemd, sss,
// ldap ...) for a user or host not found in the files; measured on Debian 12, getpwuid of a uid
// missing from /etc/passwd then crashes (SIGSEGV, with `passwd: files systemd`), and on Debian 11
// (glibc 2.31) any such dlopen aborts. libssh calls getpwuid_r itself (~ and the default user), so
// the static binary confines name lookups to what static glibc has built in: /etc/passwd and
// /etc/group, /etc/hosts and DNS (docs/install.md, "The static binary and name services").

#include <string>

namespace rv::proc {

// In the static binary: passwd, group and shadow from the files only, hosts from /etc/hosts and
// DNS, never a dlopen'ed NSS module. Call first thing in main. A no-op in the dynamic build.
void confine_name_services();

// The user's name: getpwuid's, else $USER, else $LOGNAME; "" when none says. In the static binary
// a user known only to LDAP/SSSD is not in /etc/passwd, and $USER answers.
std::string local_user_name();

// $HOME; else the home of the user's password entry; "" when neither says.
std::string local_home_dir();

} // namespace rv::proc
