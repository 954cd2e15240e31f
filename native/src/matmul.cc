#include "matmul.h"

#include <algorithm>

namespace flywheel {

namespace {

// Rows of x one task covers in the many-row path: its x block (rows × cols f32) stays in cache
// while the task's panels stream past, and each panel is widened once per block.
constexpr int kRowBlock = 256;
// Aim for this many tasks per thread, so a thread slowed by other load is covered by the rest,
// but give each task at least kMinTaskWork multiply-adds so claiming stays negligible.
constexpr int kTasksPerThread = 32;
constexpr double kMinTaskWork = 1 << 18;
// Below this many multiply-adds the calling thread works alone: handing work to the pool costs
// more than it saves (a k/v projection of a small model in decode is ~100k).
constexpr double kSerialWork = 1 << 19;

struct Plan {
  int row_blocks;
  int panel_chunks;
  int panels_per_chunk;
};

Plan plan(int rows, int panels, int cols, int threads) {
  Plan result;
  result.row_blocks = (rows + kRowBlock - 1) / kRowBlock;
  const double work = static_cast<double>(rows) * panels * kPanel * cols;
  const int tasks = static_cast<int>(std::min<double>(threads * kTasksPerThread, std::max(1.0, work / kMinTaskWork)));
  int wanted_chunks = std::max(1, tasks / result.row_blocks);
  result.panels_per_chunk = std::max(1, (panels + wanted_chunks - 1) / wanted_chunks);
  result.panel_chunks = (panels + result.panels_per_chunk - 1) / result.panels_per_chunk;
  return result;
}

}  // namespace

void matmul(ThreadPool& pool, Scratch& scratch, const MatmulKernels& kernels, float* out, const float* x, int rows,
            const PackedMatrix& w, const float* bias) {
  const int cols = w.cols();
  const int outputs = w.rows();
  const int panels = w.panels();
  const DType dtype = w.dtype();
  const bool widen = dtype != DType::F32 && rows > kernels.direct_max_rows;
  if (widen) scratch.reserve(static_cast<size_t>(cols) * kPanel);
  const bool serial = static_cast<double>(rows) * outputs * cols < kSerialWork;
  const Plan p = plan(rows, panels, cols, serial ? 1 : pool.size());

  auto run = [&](int task, int thread) {
    const int row_begin = (task / p.panel_chunks) * kRowBlock;
    const int row_end = std::min(rows, row_begin + kRowBlock);
    const int panel_begin = (task % p.panel_chunks) * p.panels_per_chunk;
    const int panel_end = std::min(panels, panel_begin + p.panels_per_chunk);
    float bias16[kPanel];
    for (int panel = panel_begin; panel < panel_end; panel++) {
      const int first = panel * kPanel;
      const int valid = std::min(kPanel, outputs - first);
      for (int j = 0; j < kPanel; j++) bias16[j] = bias != nullptr && j < valid ? bias[first + j] : 0.0f;
      const void* data = w.panel(panel);
      TileKernel kernel = kernels.direct[static_cast<int>(dtype)];
      int step = kernels.direct_rows;
      if (widen) {
        float* wide = scratch.get(thread);
        kernels.widen(dtype, data, cols, wide);
        data = wide;
      }
      if (widen || dtype == DType::F32) {
        kernel = kernels.wide;
        step = kernels.wide_rows;
      }
      for (int row = row_begin; row < row_end; row += step) {
        const int count = std::min(step, row_end - row);
        kernel(x + static_cast<size_t>(row) * cols, cols, count, data, cols, out + static_cast<size_t>(row) * outputs + first,
               outputs, valid, bias16);
      }
    }
  };
  const int tasks = p.row_blocks * p.panel_chunks;
  if (serial) {
    for (int task = 0; task < tasks; task++) run(task, 0);
  } else {
    pool.parallel_for(tasks, run);
  }
}

}  // namespace flywheel
