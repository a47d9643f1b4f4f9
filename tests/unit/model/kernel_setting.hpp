#pragma once
// A test's setting of cflrun's CPU kernels (model::set_fused_kernels), restored at scope exit.
#include <cflrun/model/cpu_kernels.hpp>

namespace cflrun::model {

/// Sets fused_kernels_enabled() to `enabled` for its lifetime, then restores the previous value.
struct KernelSetting {
  explicit KernelSetting(bool enabled) : previous(fused_kernels_enabled()) {
    set_fused_kernels(enabled);
  }
  ~KernelSetting() { set_fused_kernels(previous); }
  KernelSetting(const KernelSetting&) = delete;
  KernelSetting& operator=(const KernelSetting&) = delete;
  bool previous;
};

}  // namespace cflrun::model
