#include "thread_pool.h"

#include <chrono>
#include <stdexcept>

#include "simd.h"

namespace flywheel {

namespace {

constexpr int kCountBits = 20;
constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
constexpr int kMaxTasks = static_cast<int>(kCountMask);

uint64_t generation_of(uint64_t state) { return state >> (2 * kCountBits); }
uint64_t count_of(uint64_t state) { return (state >> kCountBits) & kCountMask; }
uint64_t next_of(uint64_t state) { return state & kCountMask; }

// Workers spin this long after their last task before sleeping: long enough to bridge the gaps
// between the kernels of one forward pass, short enough not to burn a shared core between requests.
constexpr auto kSpinTime = std::chrono::microseconds(200);

inline void cpu_relax() {
#if FLYWHEEL_HAVE_X86
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads < 1) threads = 1;
  for (int thread = 1; thread < threads; thread++) workers_.emplace_back([this, thread] { worker_loop(thread); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run(int count, TaskFn fn, const void* context) {
  if (count > kMaxTasks) throw std::length_error("thread pool: too many tasks in one job");
  const uint64_t generation = (generation_of(state_.load()) + 1) & ((uint64_t{1} << 24) - 1);
  fn_ = fn;
  context_ = context;
  finished_.store(0, std::memory_order_relaxed);
  state_.store((generation << (2 * kCountBits)) | (static_cast<uint64_t>(count) << kCountBits));
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  work_on(generation, 0);
  // Tasks other threads claimed may still be running.
  int spins = 0;
  while (finished_.load(std::memory_order_acquire) < count) {
    if (++spins < 4096) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

void ThreadPool::work_on(uint64_t generation, int thread) {
  uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    if (generation_of(state) != generation || next_of(state) >= count_of(state)) return;
    if (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    fn_(context_, static_cast<int>(next_of(state)), thread);
    finished_.fetch_add(1, std::memory_order_acq_rel);
    state = state_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_loop(int thread) {
  uint64_t seen = generation_of(state_.load());
  while (!stopping_.load(std::memory_order_relaxed)) {
    auto idle_since = std::chrono::steady_clock::now();
    int polls = 0;
    // Spin for new work first; fall asleep only after kSpinTime without any.
    while (generation_of(state_.load(std::memory_order_acquire)) == seen && !stopping_.load(std::memory_order_relaxed)) {
      cpu_relax();
      if (++polls % 256 == 0 && std::chrono::steady_clock::now() - idle_since > kSpinTime) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return stopping_.load() || generation_of(state_.load()) != seen; });
        sleepers_.fetch_sub(1);
        break;
      }
    }
    if (stopping_.load()) return;
    seen = generation_of(state_.load(std::memory_order_acquire));
    work_on(seen, thread);
  }
}

}  // namespace flywheel
