#pragma once
// Matchers for the argv a scripted runner sees (tests/fakes/fake_runner.hpp and its kin).

#include <algorithm>
#include <string>
#include <vector>

namespace rv::test {

// Whether `argv` holds `word` as one whole argument.
inline bool has(const std::vector<std::string>& argv, const std::string& word)
{
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

// Whether some argument of `argv` contains `part`.
inline bool mentions(const std::vector<std::string>& argv, const std::string& part)
{
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.find(part) != std::string::npos; });
}

} // namespace rv::test
