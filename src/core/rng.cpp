#include <cflrun/core/rng.hpp>

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

namespace cflrun::core {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t seed, Purpose purpose, std::uint64_t a, std::uint64_t b) {
  std::uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<std::uint64_t>(purpose));
  h = splitmix64(h ^ a);
  return splitmix64(h ^ b);
}

std::mt19937_64 make_engine(std::uint64_t seed, Purpose purpose, std::uint64_t a, std::uint64_t b) {
  return std::mt19937_64(derive_seed(seed, purpose, a, b));
}

at::Generator make_torch_generator(std::uint64_t seed, Purpose purpose, std::uint64_t a,
                                   std::uint64_t b) {
  return at::detail::createCPUGenerator(derive_seed(seed, purpose, a, b));
}

std::uint64_t dropout_seed(std::uint64_t seed, Purpose purpose, std::uint64_t a, std::uint64_t b) {
  return derive_seed(derive_seed(seed, purpose, a, b), Purpose::kDropout);
}

double uniform01(std::mt19937_64& engine) {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  return static_cast<double>(engine() >> 11U) * kTwoToMinus53;
}

std::uint64_t uniform_index(std::mt19937_64& engine, std::uint64_t n) {
  if (n == 0) {
    throw std::invalid_argument("uniform_index: n must be positive");
  }
  const std::uint64_t limit = engine.max() - engine.max() % n;
  std::uint64_t x = engine();
  while (x >= limit) {
    x = engine();
  }
  return x % n;
}

}  // namespace cflrun::core
