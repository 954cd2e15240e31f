#include "matmul.h"

#include <algorithm>
#include <stdexcept>

#include "matmul_bf16.h"

namespace flywheel {

namespace {

// Rows of x one task covers in the many-row path: its x block (rows × cols f32) stays in cache
// while the task's panels stream past, and each panel is widened once per block.
constexpr int kRowBlock = 256;
// Panels handled together: the few-row tiles read up to this many side by side (independent sums
// hide the FMA latency), and the row steps of one group reuse its panels from cache.
constexpr int kPanelGroup = 8;
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
  const int wanted_chunks = std::max(1, tasks / result.row_blocks);
  const int per_chunk = std::max(1, (panels + wanted_chunks - 1) / wanted_chunks);
  result.panels_per_chunk = (per_chunk + kPanelGroup - 1) / kPanelGroup * kPanelGroup;
  result.panel_chunks = (panels + result.panels_per_chunk - 1) / result.panels_per_chunk;
  return result;
}

// What task `task` of plan p covers: its block of rows, and panel group by panel group
// fn(row_begin, row_end, first_panel, panel_count, valid_last), valid_last being the outputs of
// the group's last panel.
template <typename Fn>
void for_task_groups(const Plan& p, int task, int rows, int panels, int outputs, const Fn& fn) {
  const int row_begin = (task / p.panel_chunks) * kRowBlock;
  const int row_end = std::min(rows, row_begin + kRowBlock);
  const int chunk_begin = (task % p.panel_chunks) * p.panels_per_chunk;
  const int chunk_end = std::min(panels, chunk_begin + p.panels_per_chunk);
  for (int first = chunk_begin; first < chunk_end; first += kPanelGroup) {
    const int count = std::min(kPanelGroup, chunk_end - first);
    fn(row_begin, row_end, first, count, std::min(kPanel, outputs - (first + count - 1) * kPanel));
  }
}

}  // namespace

void matmul(ThreadPool& pool, Scratch& scratch, const MatmulKernels& kernels, float* out, const float* x, int rows,
            const PackedMatrix& w, const float* bias, bool accumulate, int depth_limit) {
  if (w.paired()) throw std::invalid_argument("matmul: a paired matrix is multiplied by matmul_paired");
  const int cols = w.cols();
  const int outputs = w.rows();
  const int panels = w.panels();
  const DType dtype = w.dtype();
  const bool widen = dtype != DType::F32 && rows > kernels.direct_max_rows;
  const int depth = std::min(cols, depth_limit);
  const size_t widened_floats = widen ? static_cast<size_t>(kPanelGroup) * depth * kPanel : 0;
  const bool serial = static_cast<double>(rows) * outputs * cols < kSerialWork;
  const Plan p = plan(rows, panels, cols, serial ? 1 : pool.size());
  const size_t packed_bytes = static_cast<size_t>(cols) * kPanel * dtype_size(dtype);
  // f32 panels and widened ones run the f32 tiles; 16-bit panels with few rows are read as stored.
  const bool wide = widen || dtype == DType::F32;
  const TileKernel kernel = wide ? kernels.wide : kernels.direct[static_cast<int>(dtype)];
  const int step = wide ? kernels.wide_rows : kernels.direct_rows;
  // Rows of x a multiple of 4 KiB apart fall in the same L1 sets, and a tile's rows then evict one
  // another (a third slower at hidden sizes of 1024, 2048, …): such rows are copied, a row step
  // at a time, to rows padded 64 bytes apart. The same values, so the same bits.
  const bool pad_rows = rows > 1 && cols % 1024 == 0;
  const size_t padded_stride = static_cast<size_t>(depth) + 16;
  scratch.reserve(widened_floats + (pad_rows ? step * padded_stride : 0));

  auto run = [&](int task, int thread) {
    for_task_groups(p, task, rows, panels, outputs, [&](int row_begin, int row_end, int first, int count, int valid_last) {
      const float* group_bias = bias != nullptr ? bias + static_cast<size_t>(first) * kPanel : nullptr;
      for (int k0 = 0; k0 < cols; k0 += depth) {
        const int block = std::min(depth, cols - k0);
        const bool resume = accumulate || k0 > 0;
        const bool finish = k0 + block == cols;
        const Chain chain = chain_part(resume, finish);
        const size_t offset = static_cast<size_t>(k0) * kPanel * dtype_size(dtype);
        const void* data = static_cast<const uint8_t*>(w.panel(first)) + offset;
        size_t stride = packed_bytes;
        if (widen) {
          float* buffer = scratch.get(thread);
          for (int i = 0; i < count; i++) {
            kernels.widen(dtype, static_cast<const uint8_t*>(w.panel(first + i)) + offset, block, buffer + static_cast<size_t>(i) * block * kPanel);
          }
          data = buffer;
          stride = static_cast<size_t>(block) * kPanel * sizeof(float);
        }
        for (int row = row_begin; row < row_end; row += step) {
          const int n = std::min(step, row_end - row);
          const float* rows_x = x + static_cast<size_t>(row) * cols + k0;
          size_t x_stride = cols;
          if (pad_rows) {
            float* padded = scratch.get(thread) + widened_floats;
            for (int r = 0; r < n; r++) std::copy(rows_x + static_cast<size_t>(r) * cols, rows_x + static_cast<size_t>(r) * cols + block, padded + r * padded_stride);
            rows_x = padded;
            x_stride = padded_stride;
          }
          kernel(rows_x, x_stride, n, data, stride, count, block,
                 out + static_cast<size_t>(row) * outputs + static_cast<size_t>(first) * kPanel, outputs, valid_last, group_bias, chain);
        }
      }
    });
  };
  const int tasks = p.row_blocks * p.panel_chunks;
  if (serial) {
    for (int task = 0; task < tasks; task++) run(task, 0);
  } else {
    pool.parallel_for(tasks, run);
  }
}

void matmul_paired(ThreadPool& pool, std::vector<uint16_t>& rounded, float* out, const float* x, int rows, const PackedMatrix& w,
                   const float* bias, bool accumulate, int depth_limit) {
  const Bf16Kernels& kernels = *bf16_kernels();
  const int cols = w.cols();
  const int stored = w.stored_cols();
  const int outputs = w.rows();
  const int panels = w.panels();
  const bool serial = static_cast<double>(rows) * outputs * cols < kSerialWork;
  // x rounded once, shared by every task (a task's rows meet every panel chunk); by the calling
  // thread alone when the whole product runs there (decode's single rows).
  rounded.resize(static_cast<size_t>(rows) * stored);
  const int row_chunks = serial ? 1 : std::min(rows, pool.size() * 4);
  auto round_chunk = [&](int chunk, int) {
    const int begin = chunk * rows / row_chunks;
    const int end = (chunk + 1) * rows / row_chunks;
    kernels.round_rows(x + static_cast<size_t>(begin) * cols, end - begin, cols, rounded.data() + static_cast<size_t>(begin) * stored, stored);
  };
  if (serial) {
    round_chunk(0, 0);
  } else {
    pool.parallel_for(row_chunks, round_chunk);
  }
  const uint32_t* pairs = reinterpret_cast<const uint32_t*>(rounded.data());
  const int col_pairs = stored / 2;
  const int depth = std::max(1, std::min(col_pairs, depth_limit / 2));
  const Plan p = plan(rows, panels, cols, serial ? 1 : pool.size());
  const size_t panel_stride = static_cast<size_t>(kPanel) * stored;
  auto run = [&](int task, int) {
    for_task_groups(p, task, rows, panels, outputs, [&](int row_begin, int row_end, int first, int count, int valid_last) {
      const float* group_bias = bias != nullptr ? bias + static_cast<size_t>(first) * kPanel : nullptr;
      for (int j0 = 0; j0 < col_pairs; j0 += depth) {
        const int block = std::min(depth, col_pairs - j0);
        const bool resume = accumulate || j0 > 0;
        const bool finish = j0 + block == col_pairs;
        const Chain chain = chain_part(resume, finish);
        const uint16_t* data = reinterpret_cast<const uint16_t*>(w.panel(first)) + static_cast<size_t>(j0) * 2 * kPanel;
        for (int row = row_begin; row < row_end; row += kernels.tile_rows) {
          const int n = std::min(kernels.tile_rows, row_end - row);
          kernels.tile(pairs + static_cast<size_t>(row) * col_pairs + j0, col_pairs, n, data, panel_stride, count, block,
                       out + static_cast<size_t>(row) * outputs + static_cast<size_t>(first) * kPanel, outputs, valid_last, group_bias, chain);
        }
      }
    });
  };
  const int tasks = p.row_blocks * p.panel_chunks;
  if (serial) {
    for (int task = 0; task < tasks; task++) run(task, 0);
  } else {
    pool.parallel_for(tasks, run);
  }
}

}  // namespace flywheel
