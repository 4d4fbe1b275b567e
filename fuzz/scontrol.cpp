// scontrol show node/partition/job/config and the generic record grammar under them.
#include "slurm/scontrol.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  if (auto records = rv::slurm::parse_records(in)) {
    for (const auto& r : *records) {
      for (const auto& [key, value] : r.fields) {
        RV_FUZZ_CHECK(r.get(key) != nullptr);
      }
      (void)rv::slurm::node_from_record(r);
    }
  }
  (void)rv::slurm::parse_scontrol_nodes(in);
  (void)rv::slurm::parse_scontrol_partitions(in);
  (void)rv::slurm::parse_scontrol_jobs(in);
  (void)rv::slurm::parse_scontrol_config(in);
  (void)rv::slurm::parse_billing_weights(in);
  return 0;
}
