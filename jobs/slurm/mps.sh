# Sourced by jobs/slurm/gpu_node.sbatch, tests/gpu/sweep.sh and tests/gpu/issue42.sh: the NVIDIA Multi-Process Service, which gives the
# processes of a GPU one context, so that several runs' small kernels overlap instead of
# time-slicing.

# mps_start PROBE...: starts a fresh MPS daemon (stopping one an earlier call left on a still-warm
# machine), then runs the command PROBE (a small run on the GPU). Succeeds, MPS on, when the probe
# ran and an MPS server serves the GPU; otherwise stops the daemon and fails (CUDA then runs
# without MPS).
mps_start() {
  command -v nvidia-cuda-mps-control > /dev/null || return 1
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if echo get_server_list | nvidia-cuda-mps-control > /dev/null 2>&1; then
    echo "mps: stopping the MPS daemon of an earlier call"
    mps_stop
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  fi
  nvidia-cuda-mps-control -d 2> /dev/null
  if "$@" && [ -n "$(echo get_server_list | nvidia-cuda-mps-control 2> /dev/null)" ]; then
    return 0
  fi
  mps_stop
  return 1
}

# mps_stop: stops the MPS daemon and waits for its server to go.
mps_stop() {
  echo quit | nvidia-cuda-mps-control 2> /dev/null
  for _ in $(seq 20); do pgrep -x nvidia-cuda-mps > /dev/null || break; sleep 0.5; done
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}
