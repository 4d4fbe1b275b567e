#include "core/process/local_user.hpp"

#include <cstdlib>
#include <pwd.h>
#include <unistd.h>

#if RV_STATIC_BINARY
// glibc's own override of /etc/nsswitch.conf for one database (nss/nss_database.c), in every
// glibc since 2.0, static ones included.
extern "C" int __nss_configure_lookup(const char* dbname, const char* service_line);
#endif

namespace rv::proc {

namespace {

std::string env(const char* name)
{
  const char* value = std::getenv(name);
  return value ? value : "";
}

} // namespace

void confine_name_services()
{
#if RV_STATIC_BINARY
  for (const char* db : {"passwd", "group", "shadow", "initgroups"}) {
    __nss_configure_lookup(db, "files");
  }
  __nss_configure_lookup("hosts", "files dns");
#endif
}

std::string local_user_name()
{
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_name && *pw->pw_name) {
    return pw->pw_name;
  }
  if (auto user = env("USER"); !user.empty()) {
    return user;
  }
  return env("LOGNAME");
}

std::string local_home_dir()
{
  if (auto home = env("HOME"); !home.empty()) {
    return home;
  }
  const passwd* pw = ::getpwuid(::getuid());
  return pw && pw->pw_dir ? pw->pw_dir : "";
}

} // namespace rv::proc
