# rv_settings: flags every rv target shares (sanitizers); rv_warnings: the warning set.
add_library(rv_settings INTERFACE)
if(RV_SANITIZERS)
  list(JOIN RV_SANITIZERS "," _rv_san)
  target_compile_options(rv_settings INTERFACE -fsanitize=${_rv_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(rv_settings INTERFACE -fsanitize=${_rv_san})
endif()
if(RV_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RV_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++-16")
  endif()
  # Every rv library gets libFuzzer's coverage and ASan+UBSan; the fuzz targets link the fuzzer.
  target_compile_options(rv_settings INTERFACE -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
  target_link_options(rv_settings INTERFACE -fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_VERSION VERSION_LESS 19)
    # libstdc++ 12 declares std::expected only when __cpp_concepts >= 202002L; clang 16 implements
    # what it needs (P0848) but still reports 201907L (clang 19 reports 202002L).
    target_compile_options(rv_settings INTERFACE -Wno-builtin-macro-redefined -U__cpp_concepts
                                                 -D__cpp_concepts=202002L)
  endif()
endif()
target_compile_definitions(rv_settings INTERFACE $<$<CONFIG:Debug>:_GLIBCXX_ASSERTIONS>)

add_library(rv_warnings INTERFACE)
target_compile_options(rv_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  -Wcast-align -Wdouble-promotion -Wconversion -Wsign-conversion
  $<$<BOOL:${RV_WARNINGS_AS_ERRORS}>:-Werror>)
# GCC 12 at -O2/-O3 reports impossible std::string memcpy overlaps (-Wrestrict, GCC bugs 105329
# and 105651) in plain string assignments; fixed in GCC 13.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(rv_warnings INTERFACE -Wno-restrict)
endif()

# rv_library(NAME [DEPS...]): library rv_NAME (alias rv::NAME) from every .cpp below the current
# folder, linking DEPS publicly. A folder with headers only yields an INTERFACE library.
function(rv_library name)
  file(GLOB_RECURSE _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  list(FILTER _srcs EXCLUDE REGEX "/main\\.cpp$")
  if(_srcs)
    add_library(rv_${name} STATIC ${_srcs})
    target_include_directories(rv_${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(rv_${name} PRIVATE rv_warnings PUBLIC rv_settings ${ARGN})
  else()
    add_library(rv_${name} INTERFACE)
    target_include_directories(rv_${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(rv_${name} INTERFACE rv_settings ${ARGN})
  endif()
  add_library(rv::${name} ALIAS rv_${name})
endfunction()
