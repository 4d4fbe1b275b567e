#include "slurm/sshare.hpp"

#include "slurm/table.hpp"
#include "slurm/text.hpp"

namespace rv::slurm {

std::vector<std::string> sshare_argv()
{
  return {"sshare", "-P", "-n", "-U", "-o", "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare"};
}

Result<std::vector<SshareRow>> parse_sshare(std::string_view input)
{
  auto t = parse_table(input, "", {"ACCOUNT"});
  // Without a header: rv's order (the NormUsage/EffectvUsage column sits in the same place).
  auto col = [&](std::string_view name, int fallback) { return t.header.empty() ? fallback : column(t, name); };
  int account = col("ACCOUNT", 0), user = col("USER", 1), raw_shares = col("RAWSHARES", 2), norm = col("NORMSHARES", 3),
      raw_usage = col("RAWUSAGE", 4),
      eff = t.header.empty() ? 5 : std::max(column(t, "EFFECTVUSAGE"), column(t, "NORMUSAGE")),
      fair = col("FAIRSHARE", 6);
  std::vector<SshareRow> out;
  for (const auto& r : t.rows) {
    auto cell = [&](int c) -> std::string {
      return c >= 0 && static_cast<std::size_t>(c) < r.size() ? r[static_cast<std::size_t>(c)] : std::string{};
    };
    SshareRow row;
    row.account = text::trim(cell(account));
    row.user = cell(user);
    row.raw_shares = cell(raw_shares);
    row.norm_shares = text::to_double(cell(norm));
    row.raw_usage = text::to_double(cell(raw_usage));
    row.effective_usage = text::to_double(cell(eff));
    row.fair_share = text::to_double(cell(fair));
    if (row.account.empty() && row.user.empty()) {
      continue;
    }
    out.push_back(std::move(row));
  }
  return out;
}

} // namespace rv::slurm
