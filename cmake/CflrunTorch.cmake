# Wraps Debian's LibTorch (TORCH_LIBRARIES, TORCH_INCLUDE_DIRS) once as the target cflrun::torch.
find_package(Torch REQUIRED)
add_library(cflrun_torch INTERFACE)
target_link_libraries(cflrun_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(cflrun_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
add_library(cflrun::torch ALIAS cflrun_torch)
