#pragma once
// rv's local state directory, the one home of its rule: $RV_STATE_DIR, else $XDG_STATE_HOME/rv,
// else ~/.local/state/rv. The request records, the caches and the held connections' sockets (when
// there is no $XDG_RUNTIME_DIR) live under it.

#include <filesystem>

namespace rv::store {

std::filesystem::path state_dir();

} // namespace rv::store
