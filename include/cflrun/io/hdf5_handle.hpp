#pragma once
/// @file
/// RAII ownership of HDF5 identifiers and translation of HDF5's error stack into Hdf5Error.
///
/// This header includes <hdf5.h>: only code that links hdf5::hdf5 (the io area and its tests) may
/// include it. Other areas use ResultWriter / ResultReader, whose headers do not expose HDF5.

#include <string>

#include <hdf5.h>

namespace cflrun::io {

/// Owns one HDF5 identifier (file, group, dataset, dataspace, datatype, attribute or property
/// list) and releases it with the matching close function when destroyed (HighFive `Object`).
/// Move-only; an empty handle holds H5I_INVALID_HID and closes nothing.
class Hdf5Handle {
 public:
  /// The H5*close function that releases the identifier (H5Fclose, H5Dclose, ...).
  using Closer = herr_t (*)(hid_t);

  /// An empty handle.
  Hdf5Handle() noexcept = default;

  /// Takes ownership of `id`, which must be valid (>= 0); `close` releases it.
  /// Use `make_handle` to check the id returned by an HDF5 call.
  Hdf5Handle(hid_t id, Closer close) noexcept;

  /// Releases the identifier; errors on close are ignored (destructors must not throw).
  ~Hdf5Handle();

  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;
  /// Transfers ownership; `other` becomes empty.
  Hdf5Handle(Hdf5Handle&& other) noexcept;
  /// Releases the current identifier, then takes ownership of `other`'s.
  Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;

  /// The owned identifier (H5I_INVALID_HID if empty); ownership stays with the handle.
  hid_t get() const noexcept { return id_; }

  /// True unless the handle is empty.
  explicit operator bool() const noexcept { return id_ >= 0; }

  /// Closes the identifier now and reports failure.
  /// @throws Hdf5Error if the close function fails (e.g. H5Fclose cannot write the file).
  void close();

 private:
  void reset() noexcept;

  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

/// Turns off HDF5's automatic printing of its error stack to stderr for the calling thread (the
/// Debian build is thread-safe, so the setting is per thread). Errors are reported by throwing
/// Hdf5Error instead. Cheap and idempotent; called by every function that opens or creates a file.
void silence_hdf5_error_printing() noexcept;

/// The HDF5 error stack of the calling thread as one line, outermost call first
/// ("H5Fcreate(): unable to create file; H5FD_open(): ... errno = 13, Permission denied"),
/// then clears the stack. Empty if the stack is empty.
std::string hdf5_error_stack_message();

/// Throws Hdf5Error("<what>: <HDF5 error stack>"); when the stack holds an operating-system error
/// (the file driver's errno, e.g. "No space left on device"), only that error, with the fix for a
/// full disk ("free space on that disk or choose another --out").
/// @param what  what was being attempted, naming the file or object, e.g.
///              "cannot create dataset /rounds/ari in results/x.h5".
[[noreturn]] void throw_hdf5_error(const std::string& what);

/// "<file name>:<object path>" of an open HDF5 object (e.g. "results/x.h5:/rounds/ari"), for
/// error messages; "<unknown HDF5 object>" if HDF5 cannot name it. Never throws an Hdf5Error.
std::string describe_object(hid_t object);

/// Wraps the identifier returned by an HDF5 call.
/// @throws Hdf5Error(`what` + HDF5 error stack) if `id` is negative (the call failed).
Hdf5Handle make_handle(hid_t id, Hdf5Handle::Closer close, const std::string& what);

/// Checks the status returned by an HDF5 call.
/// @throws Hdf5Error(`what` + HDF5 error stack) if `status` is negative (the call failed).
void check_hdf5(herr_t status, const std::string& what);

}  // namespace cflrun::io
