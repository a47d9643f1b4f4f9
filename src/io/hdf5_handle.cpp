#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/hdf5_library.hpp>

#include <algorithm>
#include <array>
#include <utility>

#include <cflrun/core/error.hpp>

namespace cflrun::io {
namespace {

constexpr std::size_t kMaxMessageLength = 256;

/// H5Ewalk2 callback: appends "func(): desc" of one stack entry to the std::string in `data`.
herr_t append_error_entry(unsigned /*n*/, const H5E_error2_t* entry, void* data) {
  auto& message = *static_cast<std::string*>(data);
  if (!message.empty()) {
    message += "; ";
  }
  message += entry->func_name != nullptr ? entry->func_name : "?";
  message += "(): ";
  if (entry->desc != nullptr && entry->desc[0] != '\0') {
    message += entry->desc;
    return 0;
  }
  std::array<char, kMaxMessageLength> minor{};
  if (H5Eget_msg(entry->min_num, nullptr, minor.data(), minor.size()) > 0) {
    message += minor.data();
  }
  return 0;
}

/// The operating-system error in an HDF5 error stack, as the sec2 driver words it ("errno = 28,
/// error message = 'No space left on device'"), with the fix for a full disk; "" if there is none.
std::string system_error_of(const std::string& stack) {
  static const std::string kKey = "error message = '";
  const auto at = stack.find(kKey);
  if (at == std::string::npos) {
    return "";
  }
  const auto start = at + kKey.size();
  const auto end = stack.find('\'', start);
  std::string error =
      stack.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (stack.find("errno = 28,") != std::string::npos ||
      stack.find("errno = 122,") != std::string::npos) {
    error += " (the disk or quota is full: free space there or choose another --out)";
  }
  return error;
}

}  // namespace

Hdf5Handle::Hdf5Handle(hid_t id, Closer close) noexcept : id_(id), close_(close) {}

Hdf5Handle::~Hdf5Handle() { reset(); }

Hdf5Handle::Hdf5Handle(Hdf5Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)),
      close_(std::exchange(other.close_, nullptr)) {}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    close_ = std::exchange(other.close_, nullptr);
  }
  return *this;
}

void Hdf5Handle::close() {
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  if (id >= 0 && close_ != nullptr) {
    check_hdf5(close_(id), "cannot close HDF5 object");
  }
}

void Hdf5Handle::reset() noexcept {
  if (id_ >= 0 && close_ != nullptr) {
    close_(id_);  // Failure cannot be reported from a destructor; close() reports it.
  }
  id_ = H5I_INVALID_HID;
}

void silence_hdf5_error_printing() noexcept { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string hdf5_error_stack_message() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, append_error_entry, &message);
  H5Eclear2(H5E_DEFAULT);
  std::replace(message.begin(), message.end(), '\n', ' ');  // ctime() in H5F_open's message
  return message;
}

void keep_hdf5_out_of_exit() noexcept { H5dont_atexit(); }

void throw_hdf5_error(const std::string& what) {
  const std::string stack = hdf5_error_stack_message();
  const auto system_error = system_error_of(stack);
  if (!system_error.empty()) {
    throw Hdf5Error(what + ": " + system_error);
  }
  throw Hdf5Error(stack.empty() ? what : what + ": " + stack);
}

std::string describe_object(hid_t object) {
  const ssize_t file_length = H5Fget_name(object, nullptr, 0);
  const ssize_t path_length = H5Iget_name(object, nullptr, 0);
  if (file_length < 0 || path_length < 0) {
    H5Eclear2(H5E_DEFAULT);
    return "<unknown HDF5 object>";
  }
  std::string file(static_cast<std::size_t>(file_length) + 1, '\0');
  std::string path(static_cast<std::size_t>(path_length) + 1, '\0');
  H5Fget_name(object, file.data(), file.size());
  H5Iget_name(object, path.data(), path.size());
  file.pop_back();
  path.pop_back();
  return file + ":" + path;
}

Hdf5Handle make_handle(hid_t id, Hdf5Handle::Closer close, const std::string& what) {
  if (id < 0) {
    throw_hdf5_error(what);
  }
  return Hdf5Handle(id, close);
}

void check_hdf5(herr_t status, const std::string& what) {
  if (status < 0) {
    throw_hdf5_error(what);
  }
}

}  // namespace cflrun::io
