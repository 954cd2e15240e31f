// A small persistent thread pool for data-parallel kernels. The calling thread works too, so a
// pool of n threads starts n - 1 workers. Tasks are claimed dynamically, one at a time, which keeps
// every core busy even when another process steals one of them for a while.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace flywheel {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task, thread) for every task in [0, count) and returns when all have finished.
  // `thread` is in [0, size()): 0 is the caller, so per-thread scratch can be indexed by it.
  template <typename Fn>
  void parallel_for(int count, const Fn& fn) {
    if (count <= 0) return;
    if (count == 1 || workers_.empty()) {
      for (int task = 0; task < count; task++) fn(task, 0);
      return;
    }
    run(count, [](const void* context, int task, int thread) { (*static_cast<const Fn*>(context))(task, thread); }, &fn);
  }

 private:
  using TaskFn = void (*)(const void* context, int task, int thread);

  void run(int count, TaskFn fn, const void* context);
  void worker_loop(int thread);
  // Claims and runs tasks of generation `generation` until none are left.
  void work_on(uint64_t generation, int thread);

  // state_ packs the job generation (24 bits), its task count (20 bits) and the next unclaimed
  // task (20 bits), so a claim is one compare-and-swap that fails for a stale generation.
  std::atomic<uint64_t> state_{0};
  std::atomic<int> finished_{0};
  TaskFn fn_ = nullptr;
  const void* context_ = nullptr;

  std::atomic<bool> stopping_{false};
  std::atomic<int> sleepers_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::thread> workers_;
};

}  // namespace flywheel
