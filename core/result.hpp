#pragma once
// Expected failures are values: every fallible rv function returns `Result<T>`.

#include <expected>
#include <string>
#include <utility>

namespace rv {

// What kind of failure; each maps to a documented exit code (docs/exit-codes.md).
enum class ErrorCode {
  generic,          // anything else
  usage,            // bad flag or value given by the user
  config,           // bad config file or RV_* variable
  parse,            // output we could not understand
  io,               // local file or process problem
  timeout,          // a command or connection ran past its limit
  unreachable,      // could not connect to the host
  auth_failed,      // the host refused every key
  host_key_unknown, // the host is not in known_hosts
  host_key_changed, // known_hosts has a different key: possible attack
  slurm_rejected,   // Slurm refused a request
  no_strategy,      // the cluster cannot run the request as asked: every strategy was dropped
  interrupted,      // SIGINT/SIGTERM
};

// An expected failure: one line saying what failed on what, and an optional hint.
struct Error {
  ErrorCode code = ErrorCode::generic;
  std::string message;
  std::string hint;
};

template <class T>
using Result = std::expected<T, Error>;

// Builds the unexpected value for a `Result<T>`.
inline std::unexpected<Error> fail(ErrorCode code, std::string message, std::string hint = {})
{
  return std::unexpected<Error>(Error{code, std::move(message), std::move(hint)});
}

// Maps an error to the process exit code documented in docs/exit-codes.md.
int exit_code_for(ErrorCode code);

} // namespace rv

// Propagates the error of a Result-returning expression; the only macro rv has.
#define RV_TRY(var, expr)                                                                                              \
  auto var##_result_ = (expr);                                                                                         \
  if (!var##_result_) {                                                                                                \
    return std::unexpected(std::move(var##_result_.error()));                                                          \
  }                                                                                                                    \
  auto var = std::move(*var##_result_)

// Returns the error of a Result<void> expression, if any.
#define RV_TRY_VOID(expr)                                                                                              \
  do {                                                                                                                 \
    if (auto rv_void_result_ = (expr); !rv_void_result_) {                                                             \
      return std::unexpected(std::move(rv_void_result_.error()));                                                      \
    }                                                                                                                  \
  } while (false)
