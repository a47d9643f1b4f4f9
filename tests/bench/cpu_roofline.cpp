// Benchmark (not a test; issue 46): how close the paper's CNN runs to this CPU's peak.
// 1. The peak: a loop of independent fused multiply-adds per thread (AVX2 8 lanes; AVX-512 16
//    lanes where the CPU has it), GFLOP/s on 1 thread and on THREADS threads at once.
// 2. Each layer of the cnn (model registry "cnn": conv 1->6 5x5 on 28x28, ReLU + 2x2 max-pool,
//    conv 6->16 5x5 on 12x12, ReLU + max-pool, linear 256->10) as LibTorch runs it: forward in
//    inference mode, and forward + backward (weight and, past the first layer, input gradients),
//    at BATCH samples per call; GFLOP/s and % of the widest ISA's peak on THREADS threads. The
//    FLOPs are the dense layer's (a backward pass counts the forward's multiply-adds once per
//    gradient), also for cflrun's fused backward, which skips the zero gradients the pooling
//    leaves: its % is of the work LibTorch's dense backward does.
// 3. The whole model: model::InferenceForward (the frozen TorchScript module cflrun scores with),
//    the eager forward and a training step (forward, backward, Adam), each with LibTorch's
//    kernels only and with cflrun's CPU kernels (cpu_kernels.hpp), GFLOP/s and % of peak.
// The round's seconds beside plain PyTorch and torch.func rounds: tests/bench/side_by_side.sh.
// Usage: build/tests/bench/cpu_roofline [THREADS=all cores] [BATCH=256] [REPEATS=5]
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/model/cpu_kernels.hpp>
#include <cflrun/model/inference_forward.hpp>
#include <cflrun/model/model_registry.hpp>

namespace {

constexpr long kFmaIterations = 100'000'000;
constexpr int kAccumulators = 10;  // independent chains: more than latency x ports (4 x 2)

/// GFLOP/s of one thread's FMA loop, 8 lanes.
__attribute__((target("avx2,fma"))) double fma_avx2() {
  __m256 acc[kAccumulators];
  for (auto& a : acc) {
    a = _mm256_set1_ps(0.0F);
  }
  const auto scale = _mm256_set1_ps(0.999999F);
  const auto add = _mm256_set1_ps(1e-7F);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < kFmaIterations / kAccumulators; ++i) {
    for (auto& a : acc) {
      a = _mm256_fmadd_ps(a, scale, add);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  volatile float sink = 0;
  for (auto& a : acc) {
    sink = sink + _mm256_cvtss_f32(a);
  }
  return 2.0 * 8 * kFmaIterations / seconds / 1e9;
}

/// GFLOP/s of one thread's FMA loop, 16 lanes.
__attribute__((target("avx512f"))) double fma_avx512() {
  __m512 acc[kAccumulators];
  for (auto& a : acc) {
    a = _mm512_set1_ps(0.0F);
  }
  const auto scale = _mm512_set1_ps(0.999999F);
  const auto add = _mm512_set1_ps(1e-7F);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < kFmaIterations / kAccumulators; ++i) {
    for (auto& a : acc) {
      a = _mm512_fmadd_ps(a, scale, add);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  volatile float sink = 0;
  float lanes[16];
  for (auto& a : acc) {
    _mm512_storeu_ps(lanes, a);
    sink = sink + lanes[0];
  }
  return 2.0 * 16 * kFmaIterations / seconds / 1e9;
}

/// The summed GFLOP/s of `threads` threads running `loop` at once.
double on_threads(int threads, double (*loop)()) {
  std::vector<double> rates(static_cast<std::size_t>(threads));
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&rates, t, loop] { rates[static_cast<std::size_t>(t)] = loop(); });
  }
  for (auto& thread : running) {
    thread.join();
  }
  double sum = 0;
  for (const auto rate : rates) {
    sum += rate;
  }
  return sum;
}

/// Best seconds of `repeats` calls of `work` (after one warm-up call).
double best_seconds(int repeats, const std::function<void()>& work) {
  work();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    work();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

struct Layer {
  std::string name;
  double forward_macs;  ///< multiply-adds per sample of the forward pass (0: not counted)
  bool input_gradient;  ///< whether backward computes the input's gradient too
  std::vector<std::int64_t> input;  ///< one sample's shape
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  bool alternative =
      false;  ///< another form of layers above (cflrun's kernel): not in the model's sum
};

void print_row(const std::string& name, double seconds, double flops, double peak) {
  if (flops > 0) {
    std::printf("%-28s %9.3f ms %8.1f GFLOP/s %6.1f %%\n", name.c_str(), seconds * 1e3,
                flops / seconds / 1e9, 100.0 * flops / seconds / 1e9 / peak);
  } else {
    std::printf("%-28s %9.3f ms\n", name.c_str(), seconds * 1e3);
  }
}

torch::Tensor batch_of(std::int64_t batch, const std::vector<std::int64_t>& sample, bool grad) {
  std::vector<std::int64_t> shape{batch};
  shape.insert(shape.end(), sample.begin(), sample.end());
  return torch::rand(shape).requires_grad_(grad);
}

std::vector<Layer> cnn_layers(torch::nn::Module& cnn) {
  const auto p = cnn.named_parameters();
  // What the cnn runs without cflrun's kernels (ConvNetImpl::features, --fused-kernels false).
  const auto pool = [](const torch::Tensor& x) {
    return torch::relu(torch::max_pool2d(x, {2, 2}));
  };
  return {
      {"conv1 1->6 5x5 28x28",
       24.0 * 24 * 6 * 25,
       false,
       {1, 28, 28},
       [p](const torch::Tensor& x) {
         return torch::conv2d(x, p["conv1.weight"], p["conv1.bias"]);
       }},
      {"relu + pool 6x24x24", 0, true, {6, 24, 24}, pool},
      {"fused relu + pool 6x24x24", 0, true, {6, 24, 24}, cflrun::model::relu_max_pool2, true},
      {"fused conv1 + relu + pool",
       24.0 * 24 * 6 * 25,
       false,
       {1, 28, 28},
       [p](const torch::Tensor& x) {
         return cflrun::model::conv5x5_relu_max_pool2(x, p["conv1.weight"], p["conv1.bias"]);
       },
       true},
      {"conv2 6->16 5x5 12x12",
       8.0 * 8 * 16 * 150,
       true,
       {6, 12, 12},
       [p](const torch::Tensor& x) {
         return torch::conv2d(x, p["conv2.weight"], p["conv2.bias"]);
       }},
      {"fused conv2 + relu + pool",  // backward with the input gradient, fused too
       8.0 * 8 * 16 * 150,
       true,
       {6, 12, 12},
       [p](const torch::Tensor& x) {
         return cflrun::model::conv5x5_relu_max_pool2(x, p["conv2.weight"], p["conv2.bias"]);
       },
       true},
      {"relu + pool 16x8x8", 0, true, {16, 8, 8}, pool},
      {"fused relu + pool 16x8x8", 0, true, {16, 8, 8}, cflrun::model::relu_max_pool2, true},
      {"linear 256->10",
       256.0 * 10,
       true,
       {256},
       [p](const torch::Tensor& x) { return torch::linear(x, p["fc.weight"], p["fc.bias"]); }},
  };
}

/// Multiply-adds per sample of the layer's backward pass: the weight gradient, and the input's
/// gradient where the layer computes it.
double backward_macs(const Layer& layer) {
  return layer.forward_macs * (layer.input_gradient ? 2 : 1);
}

void layer_rows(const std::vector<Layer>& layers, std::int64_t batch, int repeats, double peak) {
  for (const auto& layer : layers) {
    const auto inputs = batch_of(batch, layer.input, layer.input_gradient);
    const double forward = best_seconds(repeats, [&] {
      torch::InferenceMode inference;
      layer.forward(inputs.detach());
    });
    print_row(layer.name + " fwd", forward, 2.0 * layer.forward_macs * batch, peak);
    const double both = best_seconds(repeats, [&] { layer.forward(inputs).sum().backward(); });
    print_row(layer.name + " fwd+bwd", both,
              2.0 * (layer.forward_macs + backward_macs(layer)) * batch, peak);
  }
}

/// The whole cnn with LibTorch's kernels only (set_fused_kernels false) and with cflrun's,
/// alternating per repeat.
/// `layers` are the model's (cnn_layers), for its multiply-adds.
void model_rows(const cflrun::model::ModelEntry& entry, const std::vector<Layer>& layers,
                std::int64_t batch, int repeats, double peak) {
  double macs = 0;        // forward, per sample
  double train_macs = 0;  // forward + backward
  for (const auto& layer : layers) {
    if (layer.alternative) {
      continue;
    }
    macs += layer.forward_macs;
    train_macs += layer.forward_macs + backward_macs(layer);
  }
  auto network = entry.build(entry.paper_shape);
  const auto inputs = batch_of(batch, entry.paper_shape.sample_shape, false);
  const auto labels = torch::randint(10, {batch}, torch::kLong);
  torch::optim::Adam adam(network->parameters(), torch::optim::AdamOptions(0.01));
  cflrun::model::set_fused_kernels(false);  // with the kernels, InferenceForward runs eagerly
  cflrun::model::InferenceForward frozen(*network);
  double eager[2] = {1e9, 1e9}, step[2] = {1e9, 1e9};
  const double frozen_seconds = best_seconds(repeats, [&] {
    torch::InferenceMode inference;
    frozen(inputs);
  });
  for (int r = 0; r < repeats; ++r) {
    for (const int kernels : {0, 1}) {
      cflrun::model::set_fused_kernels(kernels == 1);
      network->eval();
      eager[kernels] = std::min(eager[kernels], best_seconds(1, [&] {
                                  torch::InferenceMode inference;
                                  network->forward(inputs);
                                }));
      network->train();
      step[kernels] = std::min(
          step[kernels], best_seconds(1, [&] {
            adam.zero_grad();
            torch::nn::functional::cross_entropy(network->forward(inputs), labels).backward();
            adam.step();
          }));
    }
  }
  print_row("cnn forward, frozen", frozen_seconds, 2.0 * macs * batch, peak);
  const char* names[2] = {"LibTorch", "cpu kernels"};
  for (const int kernels : {0, 1}) {
    print_row(std::string("cnn forward, eager, ") + names[kernels], eager[kernels],
              2.0 * macs * batch, peak);
  }
  for (const int kernels : {0, 1}) {
    print_row(std::string("cnn train step, ") + names[kernels], step[kernels],
              2.0 * train_macs * batch, peak);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads =
      argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  const std::int64_t batch = argc > 2 ? std::atoll(argv[2]) : 256;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  torch::set_num_threads(threads);
  // Under ATEN_CPU_CAPABILITY=avx2 or default (the AVX2 dispatch forced on an AVX-512 machine)
  // LibTorch's kernels are held to AVX2: compare with the AVX2 peak.
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  const bool avx512 = __builtin_cpu_supports("avx512f") &&
                      (capability == nullptr || std::string(capability) == "avx512");
  std::printf("FMA peak: AVX2 %.1f GFLOP/s on 1 thread, %.1f on %d\n", on_threads(1, fma_avx2),
              on_threads(threads, fma_avx2), threads);
  double peak = on_threads(threads, fma_avx2);
  if (avx512) {
    peak = on_threads(threads, fma_avx512);
    std::printf("FMA peak: AVX-512 %.1f GFLOP/s on 1 thread, %.1f on %d\n",
                on_threads(1, fma_avx512), peak, threads);
  }
  std::printf("\nLibTorch, %d threads, %lld samples per call, best of %d; %% of the %s peak\n",
              threads, static_cast<long long>(batch), repeats, avx512 ? "AVX-512" : "AVX2");
  torch::manual_seed(1);
  const auto& entry = cflrun::model::model_entry("cnn");
  const auto cnn = entry.build(entry.paper_shape);
  const auto layers = cnn_layers(*cnn);
  layer_rows(layers, batch, repeats, peak);
  model_rows(entry, layers, batch, repeats, peak);
  return 0;
}
