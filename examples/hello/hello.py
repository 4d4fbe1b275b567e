"""rv's example job: `rv run -f python3 hello.py` from this folder syncs it and runs it on the cluster."""

import os
import platform
import sys

print(f"hello from {platform.node()}: Slurm job {os.environ.get('SLURM_JOB_ID', '?')}, "
      f"GPUs {os.environ.get('CUDA_VISIBLE_DEVICES', 'none')}, Python {sys.version.split()[0]}")
print(f"running from {os.getcwd()}")
