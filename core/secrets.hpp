#pragma once
// Secrets for jobs (`rv env`): a local store, a .env reader, masking, and the file the job reads.
//
// Values never travel in argv, in the sbatch script or in Slurm's job record: rv writes them to a
// 0600 file under the request's remote directory (through stdin) before the first sbatch, and the
// job script sources that file. docs/secrets.md has the whole path.

#include "core/result.hpp"

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::secrets {

struct Var {
  std::string name;
  std::string value;
  bool operator==(const Var&) const = default;
};

// The webhook signing secret (`rv env set RV_WEBHOOK_SECRET`): the one RV_* name the store takes.
// It never reaches a job; each request's job gets a key derived from it (docs/notifications.md).
inline constexpr std::string_view k_webhook_secret = "RV_WEBHOOK_SECRET";

// A name a job can export: [A-Za-z_][A-Za-z0-9_]*, not reserved for Slurm or rv (SLURM_*, RV_*),
// and not one the shell or the job script depend on (PATH, HOME, ...).
Result<void> validate_name(std::string_view name);

// Reads .env text: `NAME=value`, `export NAME=value`, values bare, 'single-quoted' (literal) or
// "double-quoted" (\n \t \" \\ \$ escapes; may span lines); `#` comments on their own line or
// after a bare value (` #`). Errors name the line.
Result<std::vector<Var>> parse_dotenv(std::string_view text);

// What `rv env list` shows instead of a value: the first 4 characters of long values only,
// then the length, e.g. "hf_a… (37 chars)"; short values are fully hidden.
std::string mask(std::string_view value);

// The file the job sources: one `export NAME='value'` line per variable, quoted for sh.
std::string env_script(const std::vector<Var>& vars);

// The local store: a JSON file, 0600, written atomically under a lock. Refuses to read a file
// that other users can read, as ssh does with keys.
class Store {
public:
  explicit Store(std::filesystem::path path);
  // $XDG_CONFIG_HOME/rv/secrets.json, or ~/.config/rv/secrets.json.
  static std::filesystem::path default_path();

  // Every variable, sorted by name; none when the file does not exist.
  Result<std::vector<Var>> load() const;
  // Adds or replaces `vars`.
  Result<void> set(const std::vector<Var>& vars);
  // Removes `names`; fails, changing nothing, when one of them is not set.
  Result<void> remove(const std::vector<std::string>& names);

  const std::filesystem::path& path() const { return m_path; }

private:
  Result<void> modify(const std::function<Result<void>(std::vector<Var>&)>& change);
  std::filesystem::path m_path;
};

} // namespace rv::secrets
