# The libFuzzer targets, one per parser or grammar (issue #15): fuzz/<name>.cpp, and the rv
# library each reads (with what that library links). Read by fuzz/CMakeLists.txt (rv_fuzz_<name>,
# linked to that library only) and tests/CMakeLists.txt (the seeds replayed in the unit binary).
set(RV_FUZZ_TARGETS sinfo sinfo_columns scontrol squeue sacct sbatch hostlist gres duration profile config
    records rvignore shell_words nvidia_smi)
foreach(t sinfo sinfo_columns scontrol squeue sacct sbatch hostlist gres nvidia_smi)
  set(RV_FUZZ_LIBS_${t} rv::slurm)
endforeach()
set(RV_FUZZ_LIBS_duration rv::core)
set(RV_FUZZ_LIBS_config rv::core)
set(RV_FUZZ_LIBS_profile rv::strategy)
set(RV_FUZZ_LIBS_rvignore rv::sync)
set(RV_FUZZ_LIBS_shell_words rv::templates rv::sync)
set(RV_FUZZ_LIBS_records rv::app) # app/request and app/run/refanout: the one target that needs app/
