// The config file (one JSON object), read as Config::load_file reads it.
#include "core/config.hpp"
#include "fuzz/fuzz.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

// The file each input is written to; removed when the fuzzer exits.
struct TempFile {
  std::string path = "/tmp/rv-fuzz-config-" + std::to_string(::getpid()) + ".json";
  ~TempFile() { std::remove(path.c_str()); }
};

} // namespace

RV_FUZZ_TARGET
{
  static const TempFile file;
  const std::string& path = file.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  rv::Config config;
  if (config.load_file(path)) {
    for (const auto& key : rv::config_keys()) {
      (void)config.get(key.name);
    }
  }
  return 0;
}
