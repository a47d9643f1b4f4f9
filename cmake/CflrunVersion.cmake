# Records the project version and the git commit of the source tree in a generated source file.
# The commit is read at build time, so a rebuild after a new commit records the new one.
set(CFLRUN_VERSION_SOURCE ${PROJECT_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(cflrun_build_info
  COMMAND ${CMAKE_COMMAND}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DOUTPUT=${CFLRUN_VERSION_SOURCE}
    -DVERSION=${PROJECT_VERSION}
    -P ${PROJECT_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${CFLRUN_VERSION_SOURCE}
  COMMENT "Recording git commit")
