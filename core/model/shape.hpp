#pragma once
// The resource shape a candidate, a probe window and a strategy share: which GPU type on which
// partition, how many nodes, how many GPUs on each.

#include <string>

namespace rv::model {

struct Shape {
  std::string gpu_type; // the Slurm GRES type ("" = untyped)
  std::string partition;
  int nodes = 1;
  int gpus_per_node = 1;

  int total_gpus() const { return nodes * gpus_per_node; }
  const Shape& shape() const { return *this; }
  Shape& shape() { return *this; }
  friend bool operator==(const Shape&, const Shape&) = default;
};

} // namespace rv::model
