#pragma once
// Reading from the user's terminal: a line with echo off (secrets, passwords).

#include <string>

namespace rv::cli {

// Prints `prompt` on stderr, reads one line from stdin with echo off (when stdin is a terminal),
// then ends the prompt's line. "" at EOF.
std::string read_hidden_line(const std::string& prompt);

} // namespace rv::cli
