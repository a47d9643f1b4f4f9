#include <cflrun/io/hdf5_tensor.hpp>

#include <vector>

#include <cflrun/core/error.hpp>
#include <cflrun/io/hdf5_dataset.hpp>

namespace cflrun::io {

Hdf5Types hdf5_types_of(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case torch::kFloat64:
      return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case torch::kInt64:
      return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case torch::kInt32:
      return {H5T_STD_I32LE, H5T_NATIVE_INT32};
    case torch::kBool:
      return {H5T_STD_B8LE, H5T_NATIVE_B8};
    default:
      throw ShapeError(std::string("cannot store a tensor of dtype ") + c10::toString(type) +
                       "; use float32, float64, int64, int32 or bool");
  }
}

torch::ScalarType dtype_of_dataset(hid_t dataset) {
  const Hdf5Handle type = make_handle(H5Dget_type(dataset), H5Tclose,
                                      "cannot get the type of " + describe_object(dataset));
  const auto size = H5Tget_size(type.get());
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT:
      return size == 4 ? torch::kFloat32 : torch::kFloat64;
    case H5T_INTEGER:
      return size == 8 ? torch::kInt64 : torch::kInt32;
    case H5T_BITFIELD:
      return torch::kBool;
    default:
      throw DataError("unsupported tensor type in " + describe_object(dataset));
  }
}

torch::Tensor read_dataset_tensor(hid_t parent, const std::string& name) {
  const Hdf5Handle dataset = make_handle(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose,
                                         "cannot open " + name + " in " + describe_object(parent));
  const auto shape = dataset_shape(dataset.get());
  const auto dtype = dtype_of_dataset(dataset.get());
  auto tensor = torch::empty(std::vector<std::int64_t>(shape.begin(), shape.end()), dtype);
  if (tensor.numel() > 0) {
    read_whole_dataset(dataset.get(), hdf5_types_of(dtype).memory, tensor.data_ptr());
  }
  return tensor;
}

}  // namespace cflrun::io
