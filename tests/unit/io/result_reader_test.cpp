// ResultReader on files it did not write itself or cannot read: missing and non-HDF5 files,
// missing /config names, and string attributes as other tools store them.
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_writer.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/result_schema.hpp>

namespace cflrun::io {
namespace {

namespace fs = std::filesystem;

/// Two clients, one model, one phase.
ResultLayout small_layout() {
  ResultLayout layout;
  layout.num_clients = 2;
  layout.num_models = 1;
  layout.phase_names = {"query"};
  layout.planned_rounds = 1;
  return layout;
}

class ResultReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() /
           ("cflrun_result_reader_" + std::to_string(getpid()) + "_" + test);
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path out() const { return dir_ / "run.h5"; }

  fs::path dir_;
};

TEST_F(ResultReaderTest, ReaderRejectsMissingAndNonHdf5Files) {
  EXPECT_THROW(ResultReader(dir_ / "missing.h5"), DataError);
  fs::create_directories(dir_);
  const fs::path text = dir_ / "notes.h5";
  std::ofstream(text) << "not an HDF5 file\n";
  try {
    ResultReader reader(text);
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find(text.string()), std::string::npos) << error.what();
  }
}

TEST_F(ResultReaderTest, ConfigValueOfMissingNameThrowsDataErrorListingPresentNames) {
  {
    ResultWriter writer(out(), small_layout(), false);
    writer.write_config({{"seed", "1"}, {"lr", "0.001"}});
  }
  try {
    ResultReader(out()).config_value("rounds");
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_NE(std::string(error.what()).find("lr, seed"), std::string::npos) << error.what();
  }
}

TEST_F(ResultReaderTest, ReaderReadsFixedLengthStringAttributesFromOtherTools) {
  { ResultWriter writer(out(), small_layout(), false); }
  {
    // As numpy's fixed-size bytes (h5py `np.bytes_`) would store it: 8 bytes, NUL-padded.
    const Hdf5Handle file =
        make_handle(H5Fopen(out().c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, "open test file");
    const Hdf5Handle type = make_handle(H5Tcopy(H5T_C_S1), H5Tclose, "copy type");
    ASSERT_GE(H5Tset_size(type.get(), 8), 0);
    ASSERT_GE(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), 0);
    const Hdf5Handle space = make_handle(H5Screate(H5S_SCALAR), H5Sclose, "scalar space");
    const Hdf5Handle attribute =
        make_handle(H5Acreate_by_name(file.get(), schema::kConfigGroup, "note", type.get(),
                                      space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                    H5Aclose, "create attribute");
    const char value[8] = {'a', 'd', 'a', 'm', '\0', '\0', '\0', '\0'};
    ASSERT_GE(H5Awrite(attribute.get(), type.get(), value), 0);
  }
  EXPECT_EQ(ResultReader(out()).config_value("note"), "adam");
}

}  // namespace
}  // namespace cflrun::io
