#pragma once
// An app::Output that keeps what the core would have shown the user, for assertions.

#include "app/env.hpp"

#include <string>
#include <vector>

namespace rv::test {

class CaptureOutput final : public app::Output {
public:
  void out(std::string_view text) override { stdout_text.append(text); }
  void err(std::string_view text) override { stderr_text.append(text); }
  void status(const std::vector<std::string>& lines) override { frames.push_back(lines); }
  app::Terminal terminal() const override { return term; }
  std::string stdout_text, stderr_text;
  std::vector<std::vector<std::string>> frames; // every status block drawn; {} = removed
  app::Terminal term;                           // what the core is told stderr is (default: not a terminal)
};

} // namespace rv::test
