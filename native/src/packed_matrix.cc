#include "packed_matrix.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include "fp16.h"
#include "matmul_bf16.h"

namespace flywheel {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
  }
  return "?";
}

size_t dtype_size(DType dtype) { return dtype == DType::F32 ? 4 : 2; }

void AlignedDeleter::operator()(void* pointer) const { std::free(pointer); }

std::unique_ptr<uint8_t, AlignedDeleter> aligned_bytes(size_t size) {
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (size + 63) / 64 * 64;
  void* pointer = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (pointer == nullptr) throw std::bad_alloc();
  return std::unique_ptr<uint8_t, AlignedDeleter>(static_cast<uint8_t*>(pointer));
}

namespace {

// Copies `rows` checkpoint rows of `cols` values of type T (row-major, any alignment) into panels
// whose row r's value j sits at j · 16 + r % 16: the plain layout with T the value, the paired
// one with T two bf16 values (cols then counts pairs; an odd last column is completed by
// `last_half`, the zero-extended value). A panel's rows fill the same lines, so the writes stay in
// cache while each row is read once in order.
template <typename T, typename LastHalf>
void pack_rows(const uint8_t* data, int rows, int cols, size_t row_bytes, T* packed, LastHalf last_half) {
  for (int row = 0; row < rows; row++) {
    const uint8_t* source = data + static_cast<size_t>(row) * row_bytes;
    T* target = packed + static_cast<size_t>(row / kPanel) * kPanel * cols + row % kPanel;
    for (int j = 0; j < cols; j++) {
      T value;
      if (static_cast<size_t>(j + 1) * sizeof(T) <= row_bytes) {
        std::memcpy(&value, source + static_cast<size_t>(j) * sizeof(T), sizeof(T));
      } else {
        value = last_half(source + static_cast<size_t>(j) * sizeof(T));
      }
      target[static_cast<size_t>(j) * kPanel] = value;
    }
  }
}

}  // namespace

PackedMatrix::PackedMatrix(int rows, int cols, DType dtype, const uint8_t* data, bool paired)
    : rows_(rows), cols_(cols), dtype_(dtype), paired_(paired), data_(aligned_bytes(byte_size())) {
  if (paired && dtype != DType::BF16) throw std::invalid_argument("a paired matrix is bf16");
  std::memset(data_.get(), 0, byte_size());
  const size_t row_bytes = static_cast<size_t>(cols) * dtype_size(dtype);
  const auto no_half = [](const uint8_t*) { return 0u; };
  if (paired) {
    pack_rows(data, rows, stored_cols() / 2, row_bytes, reinterpret_cast<uint32_t*>(data_.get()), [](const uint8_t* source) {
      uint16_t bits;
      std::memcpy(&bits, source, 2);
      return static_cast<uint32_t>(bits);
    });
  } else if (dtype == DType::F32) {
    pack_rows(data, rows, cols, row_bytes, reinterpret_cast<uint32_t*>(data_.get()), no_half);
  } else {
    pack_rows(data, rows, cols, row_bytes, reinterpret_cast<uint16_t*>(data_.get()), [](const uint8_t*) { return uint16_t{0}; });
  }
}

size_t PackedMatrix::index(int row, int col) const {
  const size_t panel_start = static_cast<size_t>(row / kPanel) * kPanel * stored_cols();
  if (paired_) return panel_start + static_cast<size_t>(col / 2) * 2 * kPanel + (row % kPanel) * 2 + col % 2;
  return panel_start + static_cast<size_t>(col) * kPanel + row % kPanel;
}

PackedMatrix::PackedMatrix(int rows, int cols, DType dtype, bool paired)
    : rows_(rows), cols_(cols), dtype_(dtype), paired_(paired), data_(aligned_bytes(byte_size())) {}

namespace {

// Fills Wᵀ's panels (`out`, t_panels of t_cols × 16 values) from w's, with value(source) giving one
// value of Wᵀ from w's stored value at `source`. Block (p, q): Wᵀ's outputs 16p.. (w's columns) by
// Wᵀ's columns 16q.. (w's rows). In w, panel q's columns 16p..16p+15 are 256 consecutive values,
// column by column; in Wᵀ, panel p's columns 16q..16q+15 are 256 consecutive values too: the block
// is transposed in between. In a paired w the block's 256 values are its 8 pairs of columns, each
// 16 outputs × 2 values.
template <typename T, typename Value>
void transpose_panels(const PackedMatrix& w, T* out, int t_panels, int t_cols, Value value) {
  const size_t element = dtype_size(w.dtype());
  const bool paired = w.paired();
  for (int p = 0; p < t_panels; p++) {
    T* panel = out + static_cast<size_t>(p) * kPanel * t_cols;
    for (int q = 0; q < w.panels(); q++) {
      const uint8_t* block = w.panel(q) + static_cast<size_t>(p) * kPanel * kPanel * element;
      const int columns = std::min(kPanel, t_cols - q * kPanel);  // w's rows in this block
      for (int j = 0; j < columns; j++) {
        T* target = panel + static_cast<size_t>(q * kPanel + j) * kPanel;
        for (int i = 0; i < kPanel; i++) {
          // Past w's last column, Wᵀ's last panel holds zeros.
          const int offset = paired ? (i / 2) * 2 * kPanel + j * 2 + i % 2 : i * kPanel + j;
          target[i] = p * kPanel + i < w.cols() ? value(block + static_cast<size_t>(offset) * element) : T{0};
        }
      }
    }
  }
}

// One row of a panel (its values 16 apart) from `count` f32 values, converted by `convert`.
template <typename T, typename Convert>
void write_panel_row(T* target, const float* source, int count, Convert convert) {
  for (int col = 0; col < count; col++) target[static_cast<size_t>(col) * kPanel] = convert(source[col]);
}

}  // namespace

std::unique_ptr<PackedMatrix> PackedMatrix::transposed(const PackedMatrix& w, DType dtype) {
  if (dtype != DType::F32 && dtype != w.dtype()) throw std::invalid_argument("transposed: Wᵀ is f32 or W's own dtype");
  std::unique_ptr<PackedMatrix> t(new PackedMatrix(w.cols(), w.rows(), dtype));
  const auto bits16 = [](const uint8_t* source) {
    uint16_t bits;
    std::memcpy(&bits, source, 2);
    return bits;
  };
  if (dtype != DType::F32) {
    // The same 16-bit values, moved.
    transpose_panels(w, reinterpret_cast<uint16_t*>(t->data_.get()), t->panels(), t->cols(), bits16);
  } else {
    const DType from = w.dtype();
    transpose_panels(w, reinterpret_cast<float*>(t->data_.get()), t->panels(), t->cols(), [&](const uint8_t* source) {
      if (from == DType::F32) {
        float value;
        std::memcpy(&value, source, 4);
        return value;
      }
      return from == DType::F16 ? f16_to_f32(bits16(source)) : bf16_to_f32(bits16(source));
    });
  }
  return t;
}

std::unique_ptr<PackedMatrix> PackedMatrix::paired_transposed(const PackedMatrix& w) {
  std::unique_ptr<PackedMatrix> t(new PackedMatrix(w.cols(), w.rows(), DType::BF16, true));
  uint16_t* out = reinterpret_cast<uint16_t*>(t->data_.get());
  std::memset(out, 0, t->byte_size());
  // Row by row of w (one output o, strided in its panel): Wᵀ's column o, in pair o / 2's half o % 2.
  std::vector<float> row(static_cast<size_t>(w.cols()));
  const size_t t_panel = static_cast<size_t>(kPanel) * t->stored_cols();
  for (int o = 0; o < w.rows(); o++) {
    w.read_row(o, row.data());
    uint16_t* column = out + static_cast<size_t>(o / 2) * 2 * kPanel + o % 2;
    for (int i = 0; i < w.cols(); i++) column[(i / kPanel) * t_panel + (i % kPanel) * 2] = f32_to_bf16(row[i]);
  }
  return t;
}

std::unique_ptr<PackedMatrix> PackedMatrix::paired_copy(const PackedMatrix& w) {
  std::unique_ptr<PackedMatrix> copy(new PackedMatrix(w.rows(), w.cols(), DType::BF16, true));
  std::memset(copy->data_.get(), 0, copy->byte_size());
  std::vector<float> row(static_cast<size_t>(w.cols()));
  std::vector<uint32_t> pairs(static_cast<size_t>(copy->stored_cols()) / 2);
  for (int o = 0; o < w.rows(); o++) {
    w.read_row(o, row.data());
    copy->write_paired_row(o, row.data(), pairs.data());
  }
  return copy;
}

void PackedMatrix::read_row(int row, float* out) const {
  const uint8_t* base = data_.get();
  for (int col = 0; col < cols_; col++) {
    const size_t at = index(row, col);
    if (dtype_ == DType::F32) {
      std::memcpy(&out[col], base + at * 4, 4);
    } else {
      uint16_t bits;
      std::memcpy(&bits, base + at * 2, 2);
      out[col] = dtype_ == DType::F16 ? f16_to_f32(bits) : bf16_to_f32(bits);
    }
  }
}

void PackedMatrix::write(const float* values, int first_panel, int last_panel) {
  const int row_end = std::min(rows_, last_panel * kPanel);
  if (paired_) {
    std::vector<uint32_t> pairs(static_cast<size_t>(stored_cols()) / 2);
    for (int row = first_panel * kPanel; row < row_end; row++) write_paired_row(row, values + static_cast<size_t>(row) * cols_, pairs.data());
    return;
  }
  for (int row = first_panel * kPanel; row < row_end; row++) {
    const size_t start = static_cast<size_t>(row / kPanel) * kPanel * cols_ + row % kPanel;
    const float* source = values + static_cast<size_t>(row) * cols_;
    if (dtype_ == DType::F32) {
      write_panel_row(reinterpret_cast<float*>(data_.get()) + start, source, cols_, [](float v) { return v; });
    } else if (dtype_ == DType::F16) {
      write_panel_row(reinterpret_cast<uint16_t*>(data_.get()) + start, source, cols_, [](float v) { return f32_to_f16(v); });
    } else {
      write_panel_row(reinterpret_cast<uint16_t*>(data_.get()) + start, source, cols_, [](float v) { return f32_to_bf16(v); });
    }
  }
}

void PackedMatrix::write_paired_row(int row, const float* values, uint32_t* pairs) {
  // Paired matrices exist only where the CPU has the bf16 products (the addon checks).
  bf16_kernels()->round_rows(values, 1, cols_, reinterpret_cast<uint16_t*>(pairs), stored_cols());
  uint32_t* target = reinterpret_cast<uint32_t*>(data_.get()) + index(row, 0) / 2;
  for (int j = 0; j < stored_cols() / 2; j++) target[static_cast<size_t>(j) * kPanel] = pairs[j];
}

void PackedMatrix::write_transposed(const float* source, int first_panel, int last_panel) {
  if (paired_) {
    write_paired_transposed(source, first_panel, last_panel);
    return;
  }
  if (dtype_ != DType::F32) throw std::invalid_argument("write_transposed: the matrix is neither f32 nor paired");
  float* packed = reinterpret_cast<float*>(data_.get());
  for (int p = first_panel; p < last_panel; p++) {
    const int first = p * kPanel;
    const int count = std::min(kPanel, rows_ - first);
    float* panel = packed + static_cast<size_t>(p) * kPanel * cols_;
    for (int k = 0; k < cols_; k++) {
      float* target = panel + static_cast<size_t>(k) * kPanel;
      const float* from = source + static_cast<size_t>(k) * rows_ + first;
      if (count == kPanel) {
        std::memcpy(target, from, kPanel * sizeof(float));  // a constant size: inlined, not a call
      } else {
        std::memcpy(target, from, count * sizeof(float));
        std::memset(target + count, 0, (kPanel - count) * sizeof(float));
      }
    }
  }
}

void PackedMatrix::write_paired_transposed(const float* source, int first_panel, int last_panel) {
  // Paired matrices exist only where the CPU has the bf16 products (the addon checks).
  const Interleave interleave = bf16_kernels()->interleave;
  uint16_t* packed = reinterpret_cast<uint16_t*>(data_.get());
  const int pairs = stored_cols() / 2;
  for (int p = first_panel; p < last_panel; p++) {
    const int first = p * kPanel;
    const int count = std::min(kPanel, rows_ - first);
    uint16_t* panel = packed + static_cast<size_t>(p) * kPanel * stored_cols();
    for (int j = 0; j < pairs; j++) {
      const float* even = source + static_cast<size_t>(2 * j) * rows_ + first;
      uint32_t* target = reinterpret_cast<uint32_t*>(panel + static_cast<size_t>(j) * 2 * kPanel);
      interleave(even, 2 * j + 1 < cols_ ? even + rows_ : nullptr, count, target);
      std::fill(target + count, target + kPanel, 0u);
    }
  }
}

}  // namespace flywheel
