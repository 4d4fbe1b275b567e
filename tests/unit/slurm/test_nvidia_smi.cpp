// nvidia-smi's query formats: outputs of the testbed's stand-in captured in real jobs
// (tests/data/nvidia-smi/standin), real-format samples from public sources (../real), and
// hostile input.

#include "slurm/nvidia_smi.hpp"

#include "core/text.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rv;
using namespace rv::slurm;
namespace fs = std::filesystem;

namespace {

const fs::path data = fs::path(RV_TEST_DATA_DIR) / "nvidia-smi";

std::string read(const fs::path& p)
{
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> fields_of(std::string_view list)
{
  std::vector<std::string> out;
  for (auto f : text::split(list, ",")) {
    out.emplace_back(f);
  }
  return out;
}

std::vector<GpuReading> gpus_of(const std::string& text, const std::vector<std::string>& fields = {})
{
  auto t = parse_smi_csv(text, fields);
  REQUIRE(t);
  auto g = read_gpus(*t);
  REQUIRE(g);
  return *g;
}

} // namespace

TEST_CASE("nvidia-smi: the stand-in's --query-gpu in every --format gives the values the capture set")
{
  const auto fields = fields_of(k_smi_gpu_fields);
  for (const auto& [file, given] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{{"query_gpu.csv.txt", {}},
                                                                     {"query_gpu.noheader.txt", fields},
                                                                     {"query_gpu.noheader_nounits.txt", fields},
                                                                     {"query_gpu.csv.txt", fields}}) {
    CAPTURE(file);
    auto gpus = gpus_of(read(data / "standin" / file), given);
    REQUIRE(gpus.size() == 2);
    CHECK(gpus[0].index == 0);
    CHECK(gpus[0].name == "NVIDIA A100-SXM4-80GB");
    CHECK(gpus[0].uuid == "GPU-90095414-dacb-e9ba-fb13-1678e28dc82c");
    CHECK(gpus[0].bus_id == "00000000:07:00.0");
    CHECK(gpus[0].util_pct == 35);
    CHECK(gpus[0].mem_used_mib == 10240);
    CHECK(gpus[0].mem_total_mib == 81920);
    CHECK(gpus[0].temp_c == 44);
    CHECK(gpus[1].util_pct == 97);
    CHECK(gpus[1].mem_used_mib == 40110);
  }
}

TEST_CASE("nvidia-smi: the header's units are stripped from the field names")
{
  auto t = parse_smi_csv(read(data / "standin" / "query_gpu.csv.txt"));
  REQUIRE(t);
  CHECK(t->fields == fields_of(k_smi_gpu_fields));
  CHECK(t->cell(0, "utilization.gpu") == "35");
  CHECK(t->cell(0, "memory.used") == "10240");
  CHECK_FALSE(t->cell(0, "power.draw"));
  CHECK_FALSE(t->cell(9, "index"));
}

TEST_CASE("nvidia-smi: processes, with and without units, and an idle GPU's header alone")
{
  for (const auto& file : {"query_apps.csv.txt", "query_apps.noheader_nounits.txt"}) {
    CAPTURE(file);
    auto fields = std::string(file).find("noheader") != std::string::npos ? fields_of(k_smi_app_fields)
                                                                          : std::vector<std::string>{};
    auto t = parse_smi_csv(read(data / "standin" / file), fields);
    REQUIRE(t);
    auto p = read_processes(*t);
    REQUIRE(p);
    REQUIRE(p->size() == 2);
    CHECK((*p)[0].pid == 41233);
    CHECK((*p)[0].name == "python");
    CHECK((*p)[0].used_mib == 10230);
    CHECK((*p)[0].gpu_uuid == "GPU-90095414-dacb-e9ba-fb13-1678e28dc82c");
    CHECK((*p)[1].name == "/usr/bin/python3");
    CHECK((*p)[1].gpu_bus_id == "00000000:17:00.0");
  }
  auto none = parse_smi_csv(read(data / "real" / "query_apps.header_only.txt"));
  REQUIRE(none);
  CHECK(none->rows.empty());
  CHECK(read_processes(*none)->empty());
}

TEST_CASE("nvidia-smi: real formats: [N/A] and [Not Supported] are no value, not zero")
{
  auto h100 = gpus_of(read(data / "real" / "query_gpu.h100.csv.txt"));
  REQUIRE(h100.size() == 2);
  CHECK(h100[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(h100[0].util_pct == 100);
  CHECK(h100[1].util_pct == 0);
  CHECK(h100[1].mem_used_mib == 4);

  auto mig = gpus_of(read(data / "real" / "query_gpu.mig_enabled.csv.txt"));
  REQUIRE(mig.size() == 1);
  CHECK_FALSE(mig[0].util_pct); // MIG mode: no per-GPU utilisation, which is not "idle"
  CHECK(mig[0].mem_used_mib == 13);

  auto vgpu = gpus_of(read(data / "real" / "query_gpu.not_supported.csv.txt"));
  REQUIRE(vgpu.size() == 1);
  CHECK_FALSE(vgpu[0].util_pct);
  CHECK_FALSE(vgpu[0].temp_c);
  CHECK(vgpu[0].mem_total_mib == 16384);

  auto plain = gpus_of(read(data / "real" / "query_gpu.noheader_nounits.txt"), fields_of(k_smi_gpu_fields));
  REQUIRE(plain.size() == 2);
  CHECK(plain[1].util_pct == 45);
  CHECK(plain[1].bus_id == "00000000:0B:00.0");

  auto apps = parse_smi_csv(read(data / "real" / "query_apps.csv.txt"));
  REQUIRE(apps);
  auto p = read_processes(*apps);
  REQUIRE(p);
  REQUIRE(p->size() == 2);
  CHECK((*p)[0].used_mib == 130004);
  CHECK((*p)[0].name == "/usr/local/bin/python3.10");
  CHECK_FALSE((*p)[1].used_mib);
}

TEST_CASE("nvidia-smi -L: GPUs, MIG devices under them (R470+ and R450 UUIDs)")
{
  auto a = parse_gpu_list(read(data / "standin" / "list.txt"));
  REQUIRE(a);
  REQUIRE(a->size() == 2);
  CHECK((*a)[1].index == 1);
  CHECK((*a)[1].name == "NVIDIA A100-SXM4-80GB");
  CHECK((*a)[1].uuid == "GPU-fb38853b-ad8a-ea5d-8e04-01ce97652247");
  CHECK((*a)[1].mig.empty());

  auto m = parse_gpu_list(read(data / "standin" / "list.mig.txt"));
  REQUIRE(m);
  REQUIRE(m->size() == 1);
  CHECK((*m)[0].mig.size() == 7);
  CHECK((*m)[0].mig[6].profile == "1g.10gb");
  CHECK((*m)[0].mig[6].device == 6);

  auto real = parse_gpu_list(read(data / "real" / "list.mig.txt"));
  REQUIRE(real);
  REQUIRE(real->size() == 2);
  CHECK((*real)[0].name == "NVIDIA A100 40GB PCIe");
  REQUIRE((*real)[0].mig.size() == 3);
  CHECK((*real)[0].mig[2].profile == "2g.10gb");
  CHECK((*real)[0].mig[2].uuid == "MIG-de819d17-9382-56a2-b9ca-aec36c88014f");
  CHECK((*real)[1].mig.empty());

  auto old = parse_gpu_list(read(data / "real" / "list.mig_r450.txt"));
  REQUIRE(old);
  REQUIRE((*old)[0].mig.size() == 2);
  CHECK((*old)[0].mig[1].uuid == "MIG-GPU-e91edf3b-b297-37c1-a2a7-7601c3238fa2/2/0");
  CHECK(parse_gpu_list("")->empty());
}

TEST_CASE("nvidia-smi: error texts instead of a table are parse errors that quote them")
{
  const auto fields = fields_of(k_smi_gpu_fields);
  for (const auto& file : {"error.no_devices.txt", "error.no_driver.txt", "error.device_handle.txt"}) {
    CAPTURE(file);
    const auto text = read(data / "real" / file);
    auto q = parse_smi_csv(text, fields);
    REQUIRE_FALSE(q);
    CHECK(q.error().code == ErrorCode::parse);
    CHECK(q.error().message.find(text.substr(0, 20)) != std::string::npos);
    CHECK_FALSE(parse_gpu_list(text));
  }
}

TEST_CASE("nvidia-smi: hostile input never crashes and never invents a value")
{
  const auto fields = fields_of(k_smi_gpu_fields);
  CHECK_FALSE(parse_smi_csv(""));                         // no header
  CHECK(parse_smi_csv("", fields)->rows.empty());         // noheader and nothing: no GPU
  CHECK_FALSE(parse_smi_csv("1, 2\n", fields));           // too few cells
  CHECK_FALSE(parse_smi_csv("a, , b\n1, 2, 3\n"));        // an empty header cell
  CHECK_FALSE(parse_smi_csv("index, pid\n1, 2, 3, 4\n")); // surplus cells, no name to take them
  auto commas = parse_smi_csv("index, name, utilization.gpu [%]\n0, Odd, GPU, name, 7 %\n");
  REQUIRE(commas); // surplus cells belong to the name
  CHECK(commas->cell(0, "name") == "Odd, GPU, name");
  CHECK(commas->cell(0, "utilization.gpu") == "7");
  auto bad = parse_smi_csv("index, utilization.gpu [%], memory.used [MiB]\nx, 99999999999999999999 %, -5 MiB\n");
  REQUIRE(bad);
  CHECK_FALSE(read_gpus(*bad)); // no index
  auto big = parse_smi_csv("index, utilization.gpu [%], temperature.gpu\n0, 99999999999999 %, 1e400\n");
  REQUIRE(big);
  auto g = read_gpus(*big);
  REQUIRE(g);
  CHECK_FALSE((*g)[0].util_pct); // out of int range: no value
  CHECK_FALSE((*g)[0].temp_c);
  CHECK_FALSE(parse_gpu_list("GPU x: A (UUID: GPU-1)"));
  CHECK_FALSE(parse_gpu_list("GPU 0: A (UUID: )"));
  CHECK_FALSE(parse_gpu_list("  MIG 1g.5gb Device 0: (UUID: MIG-1)")); // a MIG line before any GPU
  CHECK_FALSE(parse_gpu_list("GPU 0: A (UUID: GPU-1)\n  MIG 1g.5gb Device x: (UUID: MIG-1)"));
  auto crlf = parse_smi_csv("index, utilization.gpu [%]\r\n0, 12 %\r\n");
  REQUIRE(crlf);
  CHECK(crlf->cell(0, "utilization.gpu") == "12");
}

// Captured on a real NVIDIA H200 (driver 580.159.04, CUDA 13.0) with
// scripts/capture_nvidia_smi_real.sh, idle and with a torch process busy on it
// (tests/data/nvidia-smi/captured-h200/README.md).
TEST_CASE("nvidia-smi: a real H200's answers to rv's own queries, idle and busy")
{
  const auto dir = data / "captured-h200";
  const auto fields = fields_of(k_smi_gpu_fields);
  const std::string uuid = "GPU-6a4cea9d-7f70-8535-1535-726ba0697780";
  for (const auto& [file, given] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"query_gpu.csv.txt", {}}, {"query_gpu.noheader_nounits.txt", fields}}) {
    CAPTURE(file);
    auto g = gpus_of(read(dir / file), given);
    REQUIRE(g.size() == 1);
    CHECK(g[0].index == 0);
    CHECK(g[0].name == "NVIDIA H200");
    CHECK(g[0].uuid == uuid);
    CHECK(g[0].bus_id == "00000000:00:06.0");
    CHECK(g[0].util_pct == 0);
    CHECK(g[0].mem_used_mib == 0);
    CHECK(g[0].mem_total_mib == 143771);
    CHECK(g[0].temp_c == 38);
  }
  auto busy = gpus_of(read(dir / "query_gpu.busy.csv.txt"));
  REQUIRE(busy.size() == 1);
  CHECK(busy[0].util_pct == 100);
  CHECK(busy[0].mem_used_mib == 1643);
  // The watchdog's own query (index, utilization.gpu, memory.used; noheader, nounits).
  auto wd = gpus_of(read(dir / "query_gpu.busy.watchdog.txt"), {"index", "utilization.gpu", "memory.used"});
  REQUIRE(wd.size() == 1);
  CHECK(wd[0].util_pct == 100);
  CHECK(wd[0].mem_used_mib == 1643);

  const auto apps_fields = fields_of(k_smi_app_fields);
  auto idle = parse_smi_csv(read(dir / "query_apps.csv.txt"));
  REQUIRE(idle);
  CHECK(idle->rows.empty()); // the header alone: no process
  auto idle_nh = parse_smi_csv(read(dir / "query_apps.noheader_nounits.txt"), apps_fields);
  REQUIRE(idle_nh);
  CHECK(idle_nh->rows.empty()); // nothing at all
  for (const auto& [file, given] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"query_apps.busy.csv.txt", {}}, {"query_apps.busy.noheader_nounits.txt", apps_fields}}) {
    CAPTURE(file);
    auto t = parse_smi_csv(read(dir / file), given);
    REQUIRE(t);
    auto p = read_processes(*t);
    REQUIRE(p);
    REQUIRE(p->size() == 1);
    CHECK((*p)[0].gpu_uuid == uuid);
    CHECK((*p)[0].pid == 641);
    CHECK((*p)[0].name == "python3");
    CHECK((*p)[0].used_mib == 1634);
  }
  auto list = parse_gpu_list(read(dir / "list.txt"));
  REQUIRE(list);
  REQUIRE(list->size() == 1);
  CHECK((*list)[0].name == "NVIDIA H200");
  CHECK((*list)[0].uuid == uuid);
  CHECK((*list)[0].mig.empty());
  // A field the driver does not know: exit 2 and one line, which is no row of rv's (noheader) query.
  CHECK_FALSE(parse_smi_csv(read(dir / "query_gpu.unknown_field.txt"), {"index", "no.such.field"}));
}
