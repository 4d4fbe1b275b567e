#pragma once
// What each file of the shared Slurm output corpus (../shared/cases/slurm-outputs) holds, stated
// by hand from the files: sinfo column layouts, GPU totals, and one summary line per file of what
// the parsers must understand (test_corpus.cpp checks them).

#include "slurm/sinfo.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rv::test::corpus {

using F = rv::slurm::SinfoField;
// sinfo's column layouts per file, from the command each INDEX.md entry names.
inline const std::vector<F> default_layout{F::partition, F::ignore, F::ignore, F::node_count, F::state, F::node};
inline const std::map<std::string, std::pair<std::vector<F>, std::string>> sinfo_layouts{
    {"bih-20.02-default-full-cluster-hostlists-crlf.txt", {default_layout, ""}},
    {"bih-20.02-default-truncated-timelimit-drng-crlf.txt", {default_layout, ""}},
    {"epcc-cirrus-default-resv-maint-EDITED-nodelists.txt", {default_layout, ""}},
    {"issue-slinky-101-25.11.0-default-empty-partition.txt", {default_layout, ""}},
    {"unige-bamboo-default-grep-private-mix-minus-plnd.txt", {default_layout, ""}},
    {"biohub-arc-N-O-untyped-gpu4.txt", {{F::node, F::gres, F::gres_used, F::state}, ""}},
    {"czbiohub-N-O-gres50-gresused50-h200-h100-a40.txt", {{F::node, F::gres, F::gres_used, F::state}, ""}},
    {"issue-vpenso-pr83-20.11.9-N-O-gres-gresused-null-gpu0.txt",
     {{F::node, F::alloc_mem, F::memory, F::cpus_state, F::state, F::gres, F::gres_used}, ""}},
    {"osc-ascend-gres-gresused-N-O.txt", {{F::node, F::gres, F::gres_used, F::state}, ""}},
    {"osc-owens-nodes-RS-US-separators.txt", {{F::cpus, F::node, F::features}, ""}},
    {"osc-pitzer-partition-gres-gresused-truncated-100.txt", {{F::partition, F::gres, F::gres_used}, ""}},
    {"osc-sinfo-F-C.txt", {{F::ignore}, ""}},
    {"sckyzo-17.11.2-gpus-total.txt", {{F::node, F::gres}, ""}},
    {"sckyzo-20.11.8-gpus-idle-untyped.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-20.11.8-gpus-total-untyped.txt", {{F::node_count, F::gres}, ""}},
    {"sckyzo-21.08.5-gpus-idle-null-type.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-23.11.10-gpus-allocated-h100-idx.txt", {{F::node_count, F::gres_used}, ""}},
    {"sckyzo-23.11.10-gpus-idle-h100-mi210.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-23.11.10-gpus-total-truncated-shard.txt", {{F::node_count, F::gres}, ""}},
    {"sckyzo-25.05.3-gpus-snapshot-states.txt", {{F::node_count, F::state, F::gres, F::gres_used}, ""}},
    {"sckyzo-25.05.3-node-detail-gres.txt",
     {{F::node, F::alloc_mem, F::memory, F::cpus_state, F::state, F::partition, F::gres, F::gres_used}, ""}},
    {"sckyzo-25.11.1-gpus-allocated.txt", {{F::node_count, F::gres_used}, ""}},
    {"sckyzo-25.11.1-gpus-idle.txt", {{F::node_count, F::gres, F::gres_used}, ""}},
    {"sckyzo-25.11.1-gpus-total.txt", {{F::node_count, F::gres}, ""}},
    {"sckyzo-25.11.1-partitions-cpu.txt", {{F::partition, F::cpus_state}, ","}},
    {"sckyzo-25.11.1-partitions-gpu-a100-mig-v100.txt", {{F::node_count, F::partition, F::gres, F::gres_used}, ""}},
    {"slurm-docs-26.x-shard-gresused-per-gpu-example.txt", {{F::node, F::gres, F::gres_used}, ""}},
    {"ubccr-nodehost-gres-gresused-untyped-null.txt", {{F::node, F::gres, F::gres_used}, ""}},
    {"unige-bamboo-N-n-c-m-G-C-l-vrampergpu-socket2.txt",
     {{F::node, F::cpus, F::memory, F::gres, F::cpus_state, F::ignore}, ""}},
    {"vpenso-N-O-nodelist-allocmem-memory-cpusstate-statelong.txt",
     {{F::node, F::alloc_mem, F::memory, F::cpus_state, F::state}, ""}},
    {"vpenso-n-T-down-star-fail-star.txt", {{F::node, F::state}, ","}},
};

using Totals = std::map<std::string, int>;
struct GpuExpect {
  Totals gres, used;
  int units; // distinct nodes (files with a node column) or rows (count/partition files)
};
// Counted from the files (an independent script, spot-checked by eye): per GPU type, a node
// listed once per partition counted once; `Nodes` files multiply by the count column.
inline const std::map<std::string, GpuExpect> sinfo_gpus{
    {"biohub-arc-N-O-untyped-gpu4.txt", {{{"", 96}}, {{"", 20}}, 24}},
    {"czbiohub-N-O-gres50-gresused50-h200-h100-a40.txt",
     {{{"a100", 24}, {"a6000", 24}, {"a40", 56}, {"h100", 48}, {"l40s", 8}, {"h200", 64}},
      {{"a100", 24}, {"a6000", 19}, {"a40", 41}, {"h100", 38}, {"l40s", 3}, {"h200", 64}},
      102}},
    {"issue-vpenso-pr83-20.11.9-N-O-gres-gresused-null-gpu0.txt", {{{"tesla", 32}}, {{"tesla", 22}}, 12}},
    {"osc-ascend-gres-gresused-N-O.txt", {{{"a100", 664}}, {{"a100", 627}}, 298}},
    {"osc-pitzer-partition-gres-gresused-truncated-100.txt",
     {{{"v100", 16}, {"v100-32g", 672}, {"v100-quad", 112}}, {}, 2820}},
    {"sckyzo-17.11.2-gpus-total.txt", {{{"", 16}}, {}, 2}},
    {"sckyzo-20.11.8-gpus-idle-untyped.txt", {{{"", 48}}, {{"", 7}}, 4}},
    {"sckyzo-20.11.8-gpus-total-untyped.txt", {{{"", 48}}, {}, 2}},
    {"sckyzo-21.08.5-gpus-idle-null-type.txt", {{{"", 16}}, {}, 1}},
    {"sckyzo-23.11.10-gpus-allocated-h100-idx.txt", {{}, {{"h100", 33}}, 6}},
    {"sckyzo-23.11.10-gpus-idle-h100-mi210.txt",
     {{{"rtxa5000", 4}, {"h100", 4}, {"mi210", 2}}, {{"h100", 4}, {"mi210", 2}}, 4}},
    {"sckyzo-23.11.10-gpus-total-truncated-shard.txt", {{{"rtxa5000", 4}, {"h100", 4}, {"mi210", 2}}, {}, 4}},
    {"sckyzo-25.05.3-gpus-snapshot-states.txt", {{{"model_a", 64}}, {{"model_a", 18}}, 12}},
    {"sckyzo-25.05.3-node-detail-gres.txt", {{{"model_a", 20}}, {{"model_a", 6}}, 6}},
    {"sckyzo-25.11.1-gpus-allocated.txt",
     {{}, {{"NVlink_A100_40GB", 42}, {"NVlink_A800_80GB", 4}, {"tesla_v100-sxm3-32gb", 32}}, 7}},
    {"sckyzo-25.11.1-gpus-idle.txt",
     {{{"NVlink_A100_40GB", 44}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 21}, {"tesla_v100-sxm3-32gb", 32}},
      {{"NVlink_A100_40GB", 41}, {"NVlink_A800_80GB", 4}, {"tesla_v100-sxm3-32gb", 32}},
      9}},
    {"sckyzo-25.11.1-gpus-total.txt",
     {{{"NVlink_A100_40GB", 65}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 21}, {"tesla_v100-sxm3-32gb", 64}},
      {},
      10}},
    {"sckyzo-25.11.1-partitions-gpu-a100-mig-v100.txt",
     {{{"NVlink_A100_40GB", 44}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 21}, {"tesla_v100-sxm3-32gb", 32}},
      {{"NVlink_A100_40GB", 36}, {"NVlink_A800_80GB", 4}, {"nvidia_a100_1g.5gb", 1}, {"tesla_v100-sxm3-32gb", 29}},
      13}},
    {"slurm-docs-26.x-shard-gresused-per-gpu-example.txt", {{{"", 4}}, {{"", 1}}, 1}},
    {"ubccr-nodehost-gres-gresused-untyped-null.txt",
     {{{"V100", 12}, {"P100", 2}, {"", 14}}, {{"V100", 6}, {"", 1}}, 16}},
    {"unige-bamboo-N-n-c-m-G-C-l-vrampergpu-socket2.txt", {{{"nvidia_h100_nvl", 1}}, {}, 1}},
};

// What the parsers understood of each file, as one line, so that a difference reads at a glance.
// Every file of the corpus has an entry: a new file fails until someone states what it holds.
// Zero rows are stated with the reason the file cannot give more.
inline const std::map<std::string, std::string> understood{
    // squeue
    {"squeue/bih-20.02-default-trailing-spaces-crlf.txt", "jobs=38 RUNNING:38 gpus=0"},
    // Headerless, blank-separated: read with its -o format (squeue_formats).
    {"squeue/bih-20.02-gres-b-grep-sorted-crlf.txt", "jobs=7 RUNNING:7 gpus=14"},
    {"squeue/bih-20.02-o-b-trespernode-NA-vs-gpu-crlf.txt", "jobs=38 RUNNING:38 gpus=5"},
    {"squeue/bih-20.02-tres-per-node-b-header-crlf.txt", "jobs=9 RUNNING:9 gpus=12"},
    // `-O tres-alloc` alone: no job-id column, so no jobs (the cut TRES is checked below).
    {"squeue/issue-ood_core-870-O-tres-alloc-default-width20-truncated.txt", "jobs=0 gpus=0"},
    // -O headers (REASON apart from NODELIST); the reason overflow is checked in the details.
    {"squeue/issue-pcluster-node-178-O-fixed-width-reason-overflow.txt", "jobs=1 PENDING:1 gpus=0"},
    // The first row has one field more than the header (its NAME held 0x1F): rejoined, ST is `R`.
    {"squeue/osc-cardinal-squeue-US-separated.txt", "jobs=4 RUNNING:3 TIMEOUT:1 gpus=0"},
    // `%i|%E;%R`: no state column (`?`); the reasons are checked in test_corpus_details.cpp.
    {"squeue/rug-peregrine-i-E-R-null-dependency.txt", "jobs=3 ?:3 gpus=0"},
    // Headerless `-O ...:|`: read with its format (squeue_formats).
    {"squeue/sckyzo-25.11-tres-alloc-multipartition.txt", "jobs=9 PENDING:3 RUNNING:5 SUSPENDED:1 gpus=0"},
    {"squeue/start-2026-NA-start-maintenance-reason-overflow.txt", "jobs=2 PENDING:2 gpus=0"},
    {"squeue/start-csc-puhti-2024-schednodes.txt", "jobs=1 PENDING:1 gpus=0"},
    {"squeue/start-grex-2026-gpu-priority.txt", "jobs=1 PENDING:1 gpus=0"},
    {"squeue/start-nersc-2025-quote-in-name-truncated-partition.txt", "jobs=1 PENDING:1 gpus=0"},
    {"squeue/start-sdsc-expanse-2022-schednodes-hostlists-hash-stripped.txt", "jobs=4 PENDING:4 gpus=0"},
    // sacct
    {"sacct/epfl-fidis-sacct-l-wide-plus-truncation.txt", "jobs=1 COMPLETED:1 gpus=0"},
    // `-o AllocTRES -X --noheader`: no JobID column, so no jobs (the TRES is checked below).
    {"sacct/issue-jobstats-6-P-X-noheader-alloctres-exclusive.txt", "jobs=0 gpus=0"},
    // `-o JobID,AllocTRES`: no State column (`?`).
    {"sacct/issue-slurm-mail-142-P-alloctres-mig-3g20gb-gres-cpu.txt", "jobs=2 ?:2 gpus=2"},
    {"sacct/jhpce-fixedwidth-alloctres-gpu-truncated-plus.txt", "jobs=1 COMPLETED:1 gpus=1"},
    // The header starts with User, not JobID; no State column (`?`).
    {"sacct/pitt-crc-X-M-alloctres30-fixedwidth.txt", "jobs=1 ?:1 gpus=0"},
    {"sacct/rug-peregrine-snowman-delimiter-tresusage.txt",
     "jobs=37 COMPLETED:18 FAILED:2 PENDING:3 RUNNING:14 gpus=0"},
    // `-o AllocGRES --noheader`: no JobID column, so no jobs (the GRES is checked below).
    {"sacct/sckyzo-17.11.2-allocgres.txt", "jobs=0 gpus=0"},
    // sinfo
    {"sinfo/bih-20.02-default-full-cluster-hostlists-crlf.txt",
     "rows=20 nodes=536 allocated:40 idle:461 mixed:35 usable=492"},
    {"sinfo/bih-20.02-default-truncated-timelimit-drng-crlf.txt", "rows=8 nodes=4 mixed:4 unknown:0 usable=3"},
    {"sinfo/biohub-arc-N-O-untyped-gpu4.txt", "rows=24 allocated:1 completing:1 idle:14 mixed:8 usable=24"},
    {"sinfo/czbiohub-N-O-gres50-gresused50-h200-h100-a40.txt",
     "rows=200 allocated:64 down:4 idle:57 mixed:75 usable=178"},
    {"sinfo/epcc-cirrus-default-resv-maint-EDITED-nodelists.txt",
     "rows=12 nodes=322 allocated:197 idle:114 mixed:11 usable=315"},
    {"sinfo/issue-slinky-101-25.11.0-default-empty-partition.txt", "rows=2 nodes=1 idle:1 unknown:0 usable=1"},
    {"sinfo/issue-vpenso-pr83-20.11.9-N-O-gres-gresused-null-gpu0.txt", "rows=12 idle:5 mixed:7 usable=12"},
    {"sinfo/osc-ascend-gres-gresused-N-O.txt", "rows=2348 allocated:575 completing:8 idle:122 mixed:1643 usable=2317"},
    {"sinfo/osc-owens-nodes-RS-US-separators.txt", "rows=816"},
    {"sinfo/osc-pitzer-partition-gres-gresused-truncated-100.txt", "rows=2820"},
    {"sinfo/osc-sinfo-F-C.txt", "rows=1"},
    {"sinfo/sckyzo-17.11.2-gpus-total.txt", "rows=2"},
    {"sinfo/sckyzo-20.11.8-gpus-idle-untyped.txt", "rows=4 nodes=123"},
    {"sinfo/sckyzo-20.11.8-gpus-total-untyped.txt", "rows=2 nodes=125"},
    {"sinfo/sckyzo-21.08.5-gpus-idle-null-type.txt", "rows=1 nodes=2"},
    {"sinfo/sckyzo-23.11.10-gpus-allocated-h100-idx.txt", "rows=6 nodes=23"},
    {"sinfo/sckyzo-23.11.10-gpus-idle-h100-mi210.txt", "rows=4 nodes=75"},
    {"sinfo/sckyzo-23.11.10-gpus-total-truncated-shard.txt", "rows=4 nodes=75"},
    {"sinfo/sckyzo-25.05.3-gpus-snapshot-states.txt",
     "rows=12 nodes=122 allocated:84 idle:25 mixed:12 unknown:1 usable=111"},
    {"sinfo/sckyzo-25.05.3-node-detail-gres.txt", "rows=23 allocated:7 idle:12 mixed:4 usable=15"},
    {"sinfo/sckyzo-25.11.1-gpus-allocated.txt", "rows=7 nodes=1414"},
    {"sinfo/sckyzo-25.11.1-gpus-idle.txt", "rows=9 nodes=1595"},
    {"sinfo/sckyzo-25.11.1-gpus-total.txt", "rows=10 nodes=1662"},
    {"sinfo/sckyzo-25.11.1-partitions-cpu.txt", "rows=5"},
    {"sinfo/sckyzo-25.11.1-partitions-gpu-a100-mig-v100.txt", "rows=13 nodes=565"},
    {"sinfo/slurm-docs-26.x-shard-gresused-per-gpu-example.txt", "rows=1"},
    {"sinfo/ubccr-nodehost-gres-gresused-untyped-null.txt", "rows=22"},
    {"sinfo/unige-bamboo-N-n-c-m-G-C-l-vrampergpu-socket2.txt", "rows=1"},
    {"sinfo/unige-bamboo-default-grep-private-mix-minus-plnd.txt",
     "rows=12 nodes=17 down:2 idle:2 mixed:13 unknown:0 usable=14"},
    {"sinfo/vpenso-N-O-nodelist-allocmem-memory-cpusstate-statelong.txt", "rows=21 down:4 idle:15 mixed:2 usable=17"},
    {"sinfo/vpenso-n-T-down-star-fail-star.txt", "rows=709 allocated:250 down:67 idle:338 mixed:54 usable=613"},
    // scontrol-node
    {"scontrol-node/aws-pcluster-22.05-23.02-cloud-reboot-issued-maintenance-pylit.txt", "nodes=3 usable=0 gpus=0"},
    {"scontrol-node/bih-20.02-gpu-tesla-mixed-drain-crlf.txt", "nodes=1 usable=0 gpus=4"},
    {"scontrol-node/issue-awsome-distributed-ai-195-24.05rc1-idle-drain-gres-mismatch.txt", "nodes=1 usable=0 gpus=1"},
    // A grep fragment with no NodeName: no nodes (its TRES is checked below).
    {"scontrol-node/issue-slurmcommander-5-sherlock-grep-gres-tres.txt", "nodes=0 usable=0 gpus=0"},
    // Pruned to NodeName and CfgTRES: no State=, so no node counts as usable.
    {"scontrol-node/rug-peregrine-oneline-cfgtres-pruned.txt", "nodes=313 usable=0 gpus=0"},
    {"scontrol-node/sckyzo-25.11.2-testcluster-reservation-states.txt", "nodes=7 usable=2 gpus=0"},
    {"scontrol-node/sckyzo-26.05.2-testcluster-multitype-gres.txt", "nodes=20 usable=20 gpus=40"},
    // scontrol-partition
    {"scontrol-partition/osc-owens-show-part-oneline.txt", "partitions=15 hosts=4986 gpus=1078 gpus_unknown=1"},
    {"scontrol-partition/pitt-crc-htc-M-two-partitions-zero-weights.txt",
     "partitions=2 hosts=38 gpus=0 gpus_unknown=0"},
    {"scontrol-partition/tudelft-daic-general-gpu-billing-mixed-hostlist.txt",
     "partitions=1 hosts=59 gpus=0 gpus_unknown=1"},
    {"scontrol-partition/uiuc-campuscluster-stat-gres-gpu.txt", "partitions=1 hosts=18 gpus=12 gpus_unknown=0"},
    {"scontrol-partition/unige-bamboo-private-gpu-per-type-billing-weights.txt",
     "partitions=1 hosts=1 gpus=1 gpus_unknown=0"},
    // scontrol-job
    {"scontrol-job/bih-20.02-gpu-job-trespernode-legacy-no-gres-prefix-crlf.txt", "jobs=1 FAILED:1 gpus=4"},
    {"scontrol-job/bih-20.02-pending-dependency-crlf.txt", "jobs=1 PENDING:1 gpus=0"},
    {"scontrol-job/toil-rapthor-21.x-completed-dedented.txt", "jobs=1 COMPLETED:1 gpus=0"},
    {"scontrol-job/toil-rapthor-21.x-pending-reqnodenotavail-dedented.txt", "jobs=1 PENDING:1 gpus=0"},
    {"scontrol-job/toil-rapthor-21.x-running-excnodelist-dedented.txt", "jobs=1 RUNNING:1 gpus=0"},
    // sbatch-test-only
    {"sbatch-test-only/alliance-rc32407-cpubase-bycore.txt",
     "job=10759317 start=2026-04-21T16:55:36 processors=1 nodes=rc32407 partition=cpubase_bycore_b1"},
    {"sbatch-test-only/leipzig-paula-2023.txt",
     "job=2933250 start=2023-06-21T10:00:55 processors=1 nodes=paula02 partition=paula"},
    {"sbatch-test-only/olcf-andes-2019-hostlist-range.txt",
     "job=1375 start=2019-08-06T10:54:01 processors=64 nodes=andes[499-500] partition=batch"},
    {"sbatch-test-only/spcc-25.05plus-a-using-typo.txt",
     "job=746602 start=2026-09-30T03:15:46 processors=8 nodes=spcc-a100g03 partition=GPU-1A"},
    // `sbatch: error: ... allocation failure`: an estimate is refused, as slurm_rejected.
    {"sbatch-test-only/uchicago-midway3-allocation-failure.txt", "rejected"},
    // sshare
    {"sshare/aau-biocloud-sshare-default-truncated-user.txt", "rows=18 users=1 fairshare=1"},
    {"sshare/sckyzo-fairshare-parent.txt", "rows=10 users=6 fairshare=7"},
    {"sshare/uq-bunya-sshare-default-one-user.txt", "rows=1 users=1 fairshare=1"},
    // other
    {"other/sckyzo-scontrol-show-reservation-all-nodes.txt", "records=1"},
    {"other/sckyzo-scontrol-show-reservation-empty-message.txt", "records=0"},
    {"other/sckyzo-scontrol-show-reservation-relative-time.txt", "records=1"},
};

// Headerless squeue captures, read with the -o format INDEX.md names for them.
inline const std::map<std::string, std::string> squeue_formats{
    {"bih-20.02-gres-b-grep-sorted-crlf.txt", "%.10i %20j %.2t %.5D %.4C %.10m %.16R %.13b"},
    {"rug-peregrine-i-E-R-null-dependency.txt", "%i|%E;%R"},
    // -O 'JobID:|,Account:|,UserName:|,Partition:|,State:|,NumNodes:|,NumCPUs:|,tres-alloc:'
    // (tres-alloc has no %-letter: `%?` is a field the parser ignores).
    {"sckyzo-25.11-tres-alloc-multipartition.txt", "%i|%a|%u|%P|%T|%D|%C|%?"},
};

} // namespace rv::test::corpus
