# Cross-building rv for 64-bit Arm Linux on Debian 12 (the aarch64 release tarball: scripts/release.sh
# with RV_RELEASE_ARCH=aarch64). Needs `dpkg --add-architecture arm64` and g++-aarch64-linux-gnu,
# libssh-dev:arm64, libssl-dev:arm64, zlib1g-dev:arm64, libfmt-dev:arm64, libspdlog-dev:arm64
# (header-only CLI11, nlohmann-json, toml++ and doctest serve both). Built programs run under
# qemu-user-static (CMAKE_CROSSCOMPILING_EMULATOR: the man page and completions, the tests).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
find_program(RV_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(RV_QEMU_AARCH64)
  # The Arm libraries of a dynamic build (the tests) are found under /usr/aarch64-linux-gnu and
  # the multiarch directories.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${RV_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
