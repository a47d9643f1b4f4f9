// The unit that builds the precompiled <torch/types.h> (cmake/CflrunPrecompiledHeader.cmake).
