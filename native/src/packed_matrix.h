// A weight matrix [rows × cols] (rows = output features) kept in its stored precision but laid out
// in panels for the matmul: panel p holds outputs 16p..16p+15, column by column, so element (o, k)
// sits at panel(o / 16)[k * 16 + o % 16]. One pass over a panel feeds sixteen outputs from
// contiguous memory, which suits both one-row decode (streaming, no horizontal sums) and the
// blocked many-row GEMM. Outputs past `rows` in the last panel are zero.
//
// A paired matrix (bf16 only, for the bf16 products of matmul_bf16.h: a bf16 checkpoint's weight or
// a rounded copy under the forward's, a Wᵀ under the backward's) keeps columns k and k + 1 of each
// output side by side instead: panel p's pair j holds (o, 2j) and (o, 2j + 1) for o = 16p..16p+15
// at [j·32 + (o % 16)·2 + k % 2], one 64-byte line per pair, which is the operand vdpbf16ps
// multiplies a broadcast pair of inputs with. An odd last column pairs with zeros.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace flywheel {

enum class DType { F32 = 0, F16 = 1, BF16 = 2 };

constexpr int kPanel = 16;

const char* dtype_name(DType dtype);
size_t dtype_size(DType dtype);

struct AlignedDeleter {
  void operator()(void* pointer) const;
};

// 64-byte aligned, uninitialized storage.
std::unique_ptr<uint8_t, AlignedDeleter> aligned_bytes(size_t size);

class PackedMatrix {
 public:
  // `data` holds rows × cols values of `dtype`, row-major and little-endian, as a checkpoint stores them.
  // With `paired` (bf16 only) the values are laid out in pairs of columns.
  PackedMatrix(int rows, int cols, DType dtype, const uint8_t* data, bool paired = false);
  // Wᵀ of `w` [w.cols() × w.rows()]: the layout the backward's dX = dY·W multiplies with, in
  // `dtype`, which is f32 (every value widened exactly) or w's own (the same values). Each 16×16
  // block of w's panels is one block of Wᵀ's, transposed, so no other copy of the values is made.
  static std::unique_ptr<PackedMatrix> transposed(const PackedMatrix& w, DType dtype);
  // Wᵀ of `w` as a paired bf16 matrix (every value rounded to nearest even).
  static std::unique_ptr<PackedMatrix> paired_transposed(const PackedMatrix& w);
  // `w` itself as a paired bf16 matrix (every value rounded to nearest even).
  static std::unique_ptr<PackedMatrix> paired_copy(const PackedMatrix& w);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int panels() const { return (rows_ + kPanel - 1) / kPanel; }
  DType dtype() const { return dtype_; }
  bool paired() const { return paired_; }
  // Columns as stored: a paired matrix rounds an odd count up to whole pairs.
  int stored_cols() const { return paired_ ? (cols_ + 1) / 2 * 2 : cols_; }
  size_t byte_size() const { return static_cast<size_t>(panels()) * kPanel * stored_cols() * dtype_size(dtype_); }

  // The start of panel p (stored_cols() × 16 values of dtype()).
  const uint8_t* panel(int p) const { return data_.get() + static_cast<size_t>(p) * kPanel * stored_cols() * dtype_size(dtype_); }

  // Row `row` widened to f32 (an embedding lookup).
  void read_row(int row, float* out) const;
  // Replaces the values of panels [first_panel, last_panel) from rows × cols f32 values
  // (row-major), rounded to dtype() (training updates the weights it computes with).
  void write(const float* values, int first_panel, int last_panel);
  // f32 or paired: replaces the values of panels [first_panel, last_panel) with the transpose of
  // `source` [cols() × rows()] row-major, so Wᵀ follows W after an optimizer step. No transpose is
  // done: a panel's column k is 16 consecutive values of source's row k.
  void write_transposed(const float* source, int first_panel, int last_panel);

 private:
  // Uninitialized storage of [rows × cols] values of dtype, for transposed to fill.
  PackedMatrix(int rows, int cols, DType dtype, bool paired = false);
  void write_paired_transposed(const float* source, int first_panel, int last_panel);
  // Row `row` of a paired matrix from its cols() f32 values, rounded, its pairs stored 16 apart;
  // `pairs` holds stored_cols() / 2 values of scratch.
  void write_paired_row(int row, const float* values, uint32_t* pairs);
  // Where value (row, col) sits, counted in values from the start of the storage.
  size_t index(int row, int col) const;

  int rows_;
  int cols_;
  DType dtype_;
  bool paired_ = false;
  std::unique_ptr<uint8_t, AlignedDeleter> data_;
};

}  // namespace flywheel
