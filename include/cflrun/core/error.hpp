#pragma once
/// @file
/// The error family of cflrun: every failure that a user can cause or fix is one of these types.
/// Messages say who, what was expected, what was found, and the fix.

#include <stdexcept>
#include <string>

namespace cflrun {

/// Base of every cflrun error. Catch this in `main` to print one message and exit non-zero.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A command-line option or config-file entry is missing, malformed or out of range.
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// A data file is missing, truncated or corrupt, or the data cannot satisfy a partition request.
class DataError : public Error {
 public:
  using Error::Error;
};

/// A tensor or buffer has a shape or size other than the one a function requires.
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// An MPI call failed or the ranks disagree about the work to do.
class MpiError : public Error {
 public:
  using Error::Error;
};

/// An HDF5 call failed; the message carries HDF5's own error description.
class Hdf5Error : public Error {
 public:
  using Error::Error;
};

}  // namespace cflrun
