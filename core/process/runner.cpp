#include "core/process/runner.hpp"

namespace rv::proc {

Result<std::vector<Outcome>> Runner::run_batch(const std::vector<Command>& cmds)
{
  std::vector<Outcome> outcomes;
  outcomes.reserve(cmds.size());
  for (const auto& cmd : cmds) {
    RV_TRY(outcome, run(cmd));
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

Result<int> Runner::run_interactive(const std::vector<std::string>&)
{
  return fail(ErrorCode::usage, "an interactive command needs a terminal, which " + where() + " cannot give");
}

Result<std::uint64_t> Runner::put_file(const std::string&, const std::string& remote_path, const FileMeta&)
{
  return fail(ErrorCode::usage, "cannot send " + remote_path + ": " + where() + " cannot transfer files");
}

Result<void> Runner::put_symlink(const std::string&, const std::string& remote_path)
{
  return fail(ErrorCode::usage, "cannot create " + remote_path + ": " + where() + " cannot transfer files");
}

Result<std::uint64_t> Runner::get_file(const std::string& remote_path, const std::string&)
{
  return fail(ErrorCode::usage, "cannot fetch " + remote_path + ": " + where() + " cannot transfer files");
}

} // namespace rv::proc
