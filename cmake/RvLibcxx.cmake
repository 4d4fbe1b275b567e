# RV_LIBCXX: the whole tree with clang and LLVM's libc++ instead of libstdc++, the standard library
# macOS compiles rv with (issue #40, docs/portability.md). Debian 12: clang-16, libc++-16-dev,
# libc++abi-16-dev. fmt and spdlog are used header-only: Debian's libfmt.so and libspdlog.so are
# built against libstdc++ (std::string in their ABI) and cannot link with libc++ code. CLI11,
# nlohmann/json and doctest are header-only anyway; libssh is C.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "RV_LIBCXX needs clang: configure with -DCMAKE_CXX_COMPILER=clang++-16")
endif()
add_compile_options(-stdlib=libc++)
add_link_options(-stdlib=libc++)
set(RV_HEADER_ONLY_FMT ON)
# Debian's spdlog config makes the header-only target link the shared libfmt: the header-only fmt.
find_package(Threads REQUIRED)
set_property(TARGET spdlog::spdlog_header_only PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads fmt::fmt-header-only)
