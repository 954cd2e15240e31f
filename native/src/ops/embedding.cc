// Embedding lookup and its gradient.

#include "../context.h"

namespace flywheel {

void KernelContext::embed(float* out, const PackedMatrix& table, const int32_t* ids, int count) {
  pool_.parallel_for(count, [&](int row, int) { table.read_row(ids[row], out + static_cast<size_t>(row) * table.cols()); });
}

void KernelContext::embed_backward(float* d_table, const float* d_out, const int32_t* ids, int count, int dim) {
  // Repeated ids add into the same row, so the rows go in order on one thread.
  for (int r = 0; r < count; r++) ops_.add(d_table + static_cast<size_t>(ids[r]) * dim, d_out + static_cast<size_t>(r) * dim, dim);
}

}  // namespace flywheel
