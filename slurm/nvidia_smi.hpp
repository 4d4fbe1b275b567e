#pragma once
// nvidia-smi's machine-readable outputs, read once for every part of rv that looks at a node's
// GPUs (`rv gpu`, the watchdog's samples, preflight and doctor): the CSV of `--query-gpu=...` and
// `--query-compute-apps=... --format=csv[,noheader][,nounits]`, and the list of `nvidia-smi -L`
// (MIG devices indented under their GPU). Pure; tested on the real formats and on outputs of the
// testbed's stand-in (tests/data/nvidia-smi/, docs/gpu.md).

#include "core/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rv::slurm {

// A `--format=csv` table: the query's field names (units and blanks stripped from a header:
// `memory.used [MiB]` is `memory.used`) and, per row, one cell per field. A cell is its text
// without the unit (`35 %` is `35`, `1024 MiB` is `1024`); nullopt where the tool printed no
// value: `[N/A]`, `N/A`, `[Not Supported]`, `[Unknown Error]`, `[Insufficient Permissions]`...
struct SmiTable {
  std::vector<std::string> fields;
  std::vector<std::vector<std::optional<std::string>>> rows;

  // The cell of `field` in row `row`, or nullopt (no such field, or no value).
  std::optional<std::string> cell(std::size_t row, std::string_view field) const;
};

// Parses `--format=csv` output. With `fields` empty, the first line is the header; with the
// query's field list (`noheader`), every line is a row, and a header line that is nevertheless
// there is skipped. A row with more cells than fields has a name with ", " in it (a GPU or
// process name; the cells are joined back there); a row with fewer, or text that is not a table
// at all (`No devices were found`), is a parse error quoting the line.
Result<SmiTable> parse_smi_csv(std::string_view text, const std::vector<std::string>& fields = {});

// One GPU of `--query-gpu`: what rv asks for (k_smi_gpu_fields). Missing values stay unset.
struct GpuReading {
  int index = -1;
  std::string name;
  std::string uuid;
  std::string bus_id;
  std::optional<int> util_pct;               // utilization.gpu; [N/A] on MIG-enabled GPUs
  std::optional<std::int64_t> mem_used_mib;  // memory.used
  std::optional<std::int64_t> mem_total_mib; // memory.total
  std::optional<int> temp_c;                 // temperature.gpu
};

// One process of `--query-compute-apps`.
struct GpuProcess {
  std::string gpu_uuid;
  std::string gpu_bus_id;
  std::int64_t pid = 0;
  std::string name;                     // process_name (the executable's path)
  std::optional<std::int64_t> used_mib; // used_gpu_memory / used_memory; [N/A] without permission
};

// The field lists rv queries (`--query-gpu=` and `--query-compute-apps=`, comma-joined).
inline constexpr std::string_view k_smi_gpu_fields =
    "index,name,uuid,pci.bus_id,utilization.gpu,memory.used,memory.total,temperature.gpu";
inline constexpr std::string_view k_smi_app_fields = "gpu_uuid,gpu_bus_id,pid,process_name,used_gpu_memory";

// The GPUs of a `--query-gpu` table (any field order; `gpu_uuid`, `gpu_bus_id` accepted as
// aliases). A row without a whole `index` is a parse error.
Result<std::vector<GpuReading>> read_gpus(const SmiTable& table);

// The processes of a `--query-compute-apps` table (`used_memory`, `name` accepted as aliases). A
// row without a whole `pid` is a parse error.
Result<std::vector<GpuProcess>> read_processes(const SmiTable& table);

// A MIG device of `nvidia-smi -L`: `  MIG 1g.10gb     Device  0: (UUID: MIG-...)`.
struct MigDevice {
  std::string profile; // 1g.10gb
  int device = -1;
  std::string uuid; // MIG-... (R470+) or MIG-GPU-.../gi/ci (R450)
};

// A GPU of `nvidia-smi -L`: `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)`.
struct ListedGpu {
  int index = -1;
  std::string name;
  std::string uuid;
  std::vector<MigDevice> mig;
};

// Parses `nvidia-smi -L`. Empty text is no GPU; a line that is neither a GPU nor a MIG device
// under one is a parse error quoting it (an error message such as `No devices were found`).
Result<std::vector<ListedGpu>> parse_gpu_list(std::string_view text);

} // namespace rv::slurm
