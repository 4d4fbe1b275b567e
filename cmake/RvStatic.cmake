# RV_STATIC: one rv binary that depends on nothing but the kernel (the release tarball,
# scripts/release.sh; docs/install.md). libssh, OpenSSL's libcrypto and zlib from Debian's -dev
# packages (their .a), fmt and spdlog header-only (RV_SELF_CONTAINED), libstdc++ and glibc static.
# Debian's libssh.a calls GSSAPI, of which Debian ships no static library, and which a static glibc
# cannot load safely: core/ssh/gss_stubs.cpp defines those functions as failures (no Kerberos).
# Measured numbers and what a static glibc can and cannot do: docs/install.md, docs/ssh.md.
set(RV_SELF_CONTAINED ON)
foreach(_lib ssh crypto z)
  string(TOUPPER ${_lib} _var)
  find_library(RV_LIB${_var}_A NAMES lib${_lib}.a REQUIRED)
endforeach()
find_package(Threads REQUIRED)
# The imported `ssh` target of libssh's CMake config names libssh.so: point it at libssh.a (linked
# by its full path), which needs libcrypto and zlib after it.
set_target_properties(ssh PROPERTIES IMPORTED_LOCATION_NONE ${RV_LIBSSH_A} IMPORTED_LOCATION ${RV_LIBSSH_A})
set_property(TARGET ssh APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${RV_LIBCRYPTO_A} ${RV_LIBZ_A} Threads::Threads)
# spdlog's header-only target links fmt::fmt, the shared libfmt (Debian's spdlog config): the
# header-only fmt instead.
set_property(TARGET spdlog::spdlog_header_only PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads fmt::fmt-header-only)
# RV_STATIC_BINARY: the GSSAPI stubs, the name services confined to files and dns
# (core/process/local_user.cpp), "linked: static" in rv --version.
add_compile_definitions(RV_STATIC_BINARY=1)
add_compile_options(-ffunction-sections -fdata-sections)
add_link_options(-static -Wl,--gc-sections)
