// The config file (one JSON object), read as Config::load_file reads it.
#include "core/config.hpp"
#include "fuzz/fuzz.hpp"

#include <fstream>
#include <string>
#include <unistd.h>

RV_FUZZ_TARGET
{
  static const std::string path = "/tmp/rv-fuzz-config-" + std::to_string(::getpid()) + ".json";
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
