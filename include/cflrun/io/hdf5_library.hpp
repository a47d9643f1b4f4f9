#pragma once
/// @file
/// Process-wide settings of the HDF5 library, for `main` (no HDF5 header needed).

namespace cflrun::io {

/// Keeps HDF5 from closing files in its own exit handler. After a failed write (a full disk) HDF5
/// 1.10 cannot close the file, keeps it open, and crashes (SIGSEGV in H5F__close_cb) when its exit
/// handler closes it again; cflrun closes every file itself (Hdf5Handle). Call first thing in
/// `main`, before any other HDF5 call (later calls have no effect).
void keep_hdf5_out_of_exit() noexcept;

}  // namespace cflrun::io
