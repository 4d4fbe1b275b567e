// scontrol show node/partition/job/config and the generic record grammar under them.
#include "slurm/scontrol.hpp"
#include "fuzz/fuzz.hpp"

RV_FUZZ_TARGET
{
  auto in = rv::fuzz::text(data, size);
  if (auto records = rv::slurm::parse_records(in)) {
    // The streaming reader and the owning records agree: same records, first value of each key.
    rv::slurm::RecordReader reader(in);
    for (const auto& r : *records) {
      const auto* view = reader.next();
      RV_FUZZ_CHECK(view != nullptr);
      for (const auto& [key, value] : r.fields) {
        RV_FUZZ_CHECK(r.get(key) != nullptr);
        RV_FUZZ_CHECK(view->get(key) != nullptr && *view->get(key) == value);
      }
      (void)rv::slurm::node_from_record(*view);
    }
    RV_FUZZ_CHECK(reader.next() == nullptr);
  }
  (void)rv::slurm::parse_scontrol_nodes(in);
  (void)rv::slurm::parse_scontrol_partitions(in);
  (void)rv::slurm::parse_scontrol_jobs(in);
  (void)rv::slurm::parse_scontrol_config(in);
  (void)rv::slurm::parse_billing_weights(in);
  return 0;
}
