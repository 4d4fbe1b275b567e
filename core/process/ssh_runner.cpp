#include "core/process/ssh_runner.hpp"

namespace rv::proc {

struct SshRunner::Impl {
  SshOptions options;
};

SshRunner::SshRunner(SshOptions options) : m_impl(std::make_unique<Impl>(Impl{std::move(options)})) {}
SshRunner::~SshRunner() = default;

Result<void> SshRunner::connect()
{
  return fail(ErrorCode::unreachable, "ssh: not yet implemented");
}

Result<Outcome> SshRunner::run(const Command&)
{
  return fail(ErrorCode::unreachable, "ssh: not yet implemented");
}

Result<std::vector<Outcome>> SshRunner::run_batch(const std::vector<Command>&)
{
  return fail(ErrorCode::unreachable, "ssh: not yet implemented");
}

std::string SshRunner::where() const
{
  return "ssh " + m_impl->options.destination;
}

Result<SshDestination> parse_destination(std::string_view)
{
  return SshDestination{};
}

} // namespace rv::proc
