#pragma once
// An app::Output that keeps what the core would have shown the user, for assertions.

#include "app/env.hpp"

#include <string>

namespace rv::test {

class CaptureOutput final : public app::Output {
public:
  void out(std::string_view text) override { stdout_text.append(text); }
  void err(std::string_view text) override { stderr_text.append(text); }
  std::string stdout_text, stderr_text;
};

} // namespace rv::test
