// Per-thread scratch buffers of a kernel context: thread t of the pool only ever touches buffer t,
// so tasks need no locking. Grown (never shrunk) before a parallel region starts.
#pragma once

#include <cstddef>
#include <vector>

namespace flywheel {

class Scratch {
 public:
  explicit Scratch(int threads) : buffers_(threads) {}

  // Makes every thread's buffer hold at least `floats` values (call outside parallel regions).
  void reserve(size_t floats) {
    for (auto& buffer : buffers_) {
      if (buffer.size() < floats) buffer.resize(floats);
    }
  }

  float* get(int thread) { return buffers_[thread].data(); }

 private:
  std::vector<std::vector<float>> buffers_;
};

}  // namespace flywheel
