# One precompiled <torch/types.h>, built once and reused by every target whose units include
# LibTorch (issue 21): parsing it took about 5 s of a unit's 5-6 s, loading its precompiled form
# (320 MB) under 1 s. <torch/torch.h> is not precompiled: its 560 MB form loads slower than most
# units compile, so units include the narrow headers they need (torch/nn/..., torch/optim/...).
# GCC ignores a precompiled header whose flags or macros differ from the unit's; -Winvalid-pch
# (cflrun_warnings) says so instead of silently compiling slower.
add_library(cflrun_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/precompiled_header.cpp)
# The same warnings as the units: -Wpedantic changes predefined macros (__cpp_runtime_arrays).
target_link_libraries(cflrun_pch PRIVATE cflrun::torch cflrun_warnings)
target_compile_features(cflrun_pch PRIVATE cxx_std_20)
target_precompile_headers(cflrun_pch PRIVATE <torch/types.h>)

# cflrun_use_pch(TARGET): TARGET's units start from the precompiled <torch/types.h>.
function(cflrun_use_pch target)
  target_precompile_headers(${target} REUSE_FROM cflrun_pch)
endfunction()
