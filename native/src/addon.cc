// The N-API surface: `Context` (one backend instance: thread pool + SIMD level) with one method per
// kernel, and `Matrix` (a PackedMatrix). Every argument is checked here, before any pointer
// reaches a kernel, so a wrong call from JavaScript is a thrown TypeError/RangeError, never a crash.
#include <napi.h>

#include <algorithm>
#include <memory>
#include <string>

#include "context.h"
#include "packed_matrix.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the kernels read checkpoint bytes as little-endian values"
#endif

namespace flywheel {

namespace {

// Marks objects this addon created, so an unrelated object is never unwrapped as a Matrix.
constexpr napi_type_tag kMatrixTag = {0x6a1f3c5e9b2d4a70ULL, 0x8e4c2b1d7f6a3e95ULL};

[[noreturn]] void throw_range(Napi::Env env, const std::string& message) { throw Napi::RangeError::New(env, message); }
[[noreturn]] void throw_type(Napi::Env env, const std::string& message) { throw Napi::TypeError::New(env, message); }

int int_arg(const Napi::CallbackInfo& info, size_t index, const char* name, int min) {
  if (!info[index].IsNumber()) throw_type(info.Env(), std::string(name) + " must be a number");
  const double value = info[index].As<Napi::Number>().DoubleValue();
  if (!(value >= min && value <= 2147483647.0) || value != static_cast<double>(static_cast<int64_t>(value))) {
    throw_range(info.Env(), std::string(name) + " must be an integer ≥ " + std::to_string(min));
  }
  return static_cast<int>(value);
}

template <typename T, napi_typedarray_type Type>
Napi::TypedArrayOf<T> typed_arg(const Napi::CallbackInfo& info, size_t index, const char* name, const char* type_name) {
  const Napi::Value value = info[index];
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != Type) {
    throw_type(info.Env(), std::string(name) + " must be a " + type_name);
  }
  return value.As<Napi::TypedArrayOf<T>>();
}

Napi::Float32Array f32_arg(const Napi::CallbackInfo& info, size_t index, const char* name, size_t needed, const char* op) {
  auto array = typed_arg<float, napi_float32_array>(info, index, name, "Float32Array");
  if (array.ElementLength() < needed) {
    throw_range(info.Env(), std::string(op) + ": " + name + " holds " + std::to_string(array.ElementLength()) + " values, needs " + std::to_string(needed));
  }
  return array;
}

Napi::Int32Array i32_arg(const Napi::CallbackInfo& info, size_t index, const char* name, size_t needed, const char* op) {
  auto array = typed_arg<int32_t, napi_int32_array>(info, index, name, "Int32Array");
  if (array.ElementLength() < needed) {
    throw_range(info.Env(), std::string(op) + ": " + name + " holds " + std::to_string(array.ElementLength()) + " values, needs " + std::to_string(needed));
  }
  return array;
}

float number_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (!info[index].IsNumber()) throw_type(info.Env(), std::string(name) + " must be a number");
  return info[index].As<Napi::Number>().FloatValue();
}

double double_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (!info[index].IsNumber()) throw_type(info.Env(), std::string(name) + " must be a number");
  return info[index].As<Napi::Number>().DoubleValue();
}

Napi::Float64Array f64_arg(const Napi::CallbackInfo& info, size_t index, const char* name, size_t needed, const char* op) {
  auto array = typed_arg<double, napi_float64_array>(info, index, name, "Float64Array");
  if (array.ElementLength() < needed) {
    throw_range(info.Env(), std::string(op) + ": " + name + " holds " + std::to_string(array.ElementLength()) + " values, needs " + std::to_string(needed));
  }
  return array;
}

DType dtype_arg(const Napi::CallbackInfo& info, size_t index) {
  const std::string name = info[index].IsString() ? info[index].As<Napi::String>().Utf8Value() : "";
  if (name == "F32") return DType::F32;
  if (name == "F16") return DType::F16;
  if (name == "BF16") return DType::BF16;
  throw_type(info.Env(), "dtype must be F32, F16 or BF16");
}

// Runs a method's body and turns a thrown Napi::Error into a JavaScript exception. While a worker
// thread is being terminated even that fails, and node-addon-api would let the second C++
// exception escape its callback, which ends the whole process; no JavaScript runs in that thread
// any more, so the failure is dropped there.
template <typename Body>
void guarded(Body body) {
  try {
    body();
  } catch (const Napi::Error& error) {
    try {
      error.ThrowAsJavaScriptException();
    } catch (...) {
    }
  }
}

}  // namespace

class Matrix : public Napi::ObjectWrap<Matrix> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Matrix",
                       {InstanceAccessor<&Matrix::Rows>("rows"), InstanceAccessor<&Matrix::Cols>("cols"),
                        InstanceAccessor<&Matrix::Dtype>("dtype"), InstanceAccessor<&Matrix::Paired>("paired"),
                        InstanceAccessor<&Matrix::Bytes>("byteLength"),
                        InstanceMethod<&Matrix::Read>("read")});
  }

  // new Matrix(rows, cols, dtype, bytes): packs a row-major checkpoint tensor.
  // new Matrix(rows, cols, "BF16", bytes, "paired"): the same, paired for the bf16 products (packed_matrix.h).
  // new Matrix(w, dtype): Wᵀ of another matrix, in f32 or in w's own dtype.
  // new Matrix(w, "BF16", "paired"): w itself, rounded to bf16 and paired (the bf16 forward's copy).
  // new Matrix(w, "BF16", "paired-transposed"): Wᵀ, paired for the backward's bf16 products.
  explicit Matrix(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Matrix>(info) {
    Napi::Env env = info.Env();
    const size_t layout_at = info.Length() == 3 ? 2 : 4;
    const size_t dtype_at = info.Length() == 3 ? 1 : 2;
    const std::string layout = info.Length() > layout_at && info[layout_at].IsString() ? info[layout_at].As<Napi::String>().Utf8Value() : "";
    if (!layout.empty()) {
      if (layout != "paired" && layout != "paired-transposed") throw_range(env, "a matrix's layout is \"paired\" or \"paired-transposed\"");
      if (dtype_arg(info, dtype_at) != DType::BF16) throw_range(env, "a paired matrix is bf16");
      if (!detect_bf16_products()) throw_range(env, "this CPU has no bf16 products (AVX-512 BF16)");
    }
    if (info.Length() == 3 && !layout.empty()) {
      const PackedMatrix& w = From(info, 0);
      // A paired W's Wᵀ is made like any other's; a paired copy of it would be the same matrix.
      if (w.paired() && layout == "paired") throw_range(env, "a paired matrix is not paired again");
      matrix_ = layout == "paired" ? PackedMatrix::paired_copy(w) : PackedMatrix::paired_transposed(w);
      info.This().As<Napi::Object>().TypeTag(&kMatrixTag);
      return;
    }
    if (info.Length() == 2) {
      const PackedMatrix& w = From(info, 0);
      const DType dtype = dtype_arg(info, 1);
      if (dtype != DType::F32 && dtype != w.dtype()) throw_range(env, "a transposed matrix is f32 or its source's dtype");
      matrix_ = PackedMatrix::transposed(w, dtype);
      info.This().As<Napi::Object>().TypeTag(&kMatrixTag);
      return;
    }
    const int rows = int_arg(info, 0, "rows", 1);
    const int cols = int_arg(info, 1, "cols", 1);
    const DType dtype = dtype_arg(info, 2);
    auto bytes = typed_arg<uint8_t, napi_uint8_array>(info, 3, "data", "Uint8Array");
    const size_t expected = static_cast<size_t>(rows) * cols * dtype_size(dtype);
    if (bytes.ByteLength() != expected) {
      throw_range(env, "a " + std::to_string(rows) + "×" + std::to_string(cols) + " " + dtype_name(dtype) + " matrix needs " +
                           std::to_string(expected) + " bytes, got " + std::to_string(bytes.ByteLength()));
    }
    if (layout == "paired-transposed") throw_range(env, "a checkpoint tensor is paired, not paired-transposed");
    matrix_ = std::make_unique<PackedMatrix>(rows, cols, dtype, bytes.Data(), layout == "paired");
    info.This().As<Napi::Object>().TypeTag(&kMatrixTag);
  }

  static PackedMatrix& From(const Napi::CallbackInfo& info, size_t index) {
    const Napi::Value value = info[index];
    if (!value.IsObject() || !value.As<Napi::Object>().CheckTypeTag(&kMatrixTag)) throw_type(info.Env(), "expected a native weight matrix");
    return *Unwrap(value.As<Napi::Object>())->matrix_;
  }

 private:
  Napi::Value Rows(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), matrix_->rows()); }
  Napi::Value Cols(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), matrix_->cols()); }
  Napi::Value Dtype(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), dtype_name(matrix_->dtype())); }
  Napi::Value Paired(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), matrix_->paired()); }
  Napi::Value Bytes(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(matrix_->byte_size())); }

  // read(out): every value widened to f32, row-major.
  void Read(const Napi::CallbackInfo& info) {
    guarded([&] {
      auto out = f32_arg(info, 0, "output", static_cast<size_t>(matrix_->rows()) * matrix_->cols(), "read");
      for (int row = 0; row < matrix_->rows(); row++) matrix_->read_row(row, out.Data() + static_cast<size_t>(row) * matrix_->cols());
    });
  }

  // No Finalize override and no external-memory accounting: node-addon-api opens a HandleScope to
  // run an override, which throws while a worker thread's environment is torn down, and a C++
  // exception out of a finalizer ends the process. The matrix is freed by the destructor.
  std::unique_ptr<PackedMatrix> matrix_;
};

class Context : public Napi::ObjectWrap<Context> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Context",
                       {InstanceAccessor<&Context::Threads>("threads"), InstanceAccessor<&Context::Simd>("simd"),
                        InstanceAccessor<&Context::Bf16Products>("bf16Products"),
                        InstanceMethod<&Context::Matmul>("matmul"), InstanceMethod<&Context::Embed>("embed"),
                        InstanceMethod<&Context::RmsNorm>("rmsNorm"), InstanceMethod<&Context::Rope>("rope"),
                        InstanceMethod<&Context::Attention>("attention"), InstanceMethod<&Context::SiluMul>("siluMul"),
                        InstanceMethod<&Context::AddInPlace>("addInPlace"), InstanceMethod<&Context::Gemm>("gemm"),
                        InstanceMethod<&Context::LinearWeightBackward>("linearWeightBackward"),
                        InstanceMethod<&Context::RmsNormBackward>("rmsNormBackward"),
                        InstanceMethod<&Context::RopeBackward>("ropeBackward"),
                        InstanceMethod<&Context::SiluMulBackward>("siluMulBackward"),
                        InstanceMethod<&Context::EmbedBackward>("embedBackward"),
                        InstanceMethod<&Context::AttentionBackward>("attentionBackward"),
                        InstanceMethod<&Context::TokenLogprobSums>("tokenLogprobSums"),
                        InstanceMethod<&Context::TokenLogprobsBackward>("tokenLogprobsBackward"),
                        InstanceMethod<&Context::AdamwStep>("adamwStep"), InstanceMethod<&Context::SumOfSquares>("sumOfSquares"),
                        InstanceMethod<&Context::Scale>("scale"), InstanceMethod<&Context::WriteMatrix>("writeMatrix")});
  }

  // new Context(threads, simd): simd is "auto" (the best this CPU has), "avx512", "avx2" or "scalar".
  explicit Context(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Context>(info) {
    const int threads = int_arg(info, 0, "threads", 1);
    const std::string simd = info[1].IsString() ? info[1].As<Napi::String>().Utf8Value() : "";
    const SimdLevel best = detect_simd();
    SimdLevel level;
    if (simd == "auto") {
      level = best;
    } else if (simd == "scalar") {
      level = SimdLevel::Scalar;
    } else if (simd == "avx2") {
      if (best < SimdLevel::Avx2) throw_range(info.Env(), "this CPU does not support AVX2 with FMA and F16C");
      level = SimdLevel::Avx2;
    } else if (simd == "avx512") {
      if (best < SimdLevel::Avx512) throw_range(info.Env(), "this CPU does not support AVX-512");
      level = SimdLevel::Avx512;
    } else {
      throw_type(info.Env(), "simd must be \"auto\", \"avx512\", \"avx2\" or \"scalar\"");
    }
    const int matmul_depth = info.Length() > 2 && !info[2].IsUndefined() ? int_arg(info, 2, "matmulDepth", 1) : kMatmulDepth;
    context_ = std::make_unique<KernelContext>(threads, level, matmul_depth);
  }

 private:
  Napi::Value Threads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), context_->threads()); }
  Napi::Value Simd(const Napi::CallbackInfo& info) { return Napi::String::New(info.Env(), simd_name(context_->simd())); }
  Napi::Value Bf16Products(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), context_->bf16_products()); }

  // matmul(out, x, rows, matrix, bias?, accumulate?): out (+)= x·Wᵀ (+ bias)
  void Matmul(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int rows = int_arg(info, 2, "rows", 0);
      const PackedMatrix& w = Matrix::From(info, 3);
      auto x = f32_arg(info, 1, "input", static_cast<size_t>(rows) * w.cols(), "matmul");
      auto out = f32_arg(info, 0, "output", static_cast<size_t>(rows) * w.rows(), "matmul");
      const float* bias = nullptr;
      if (!info[4].IsUndefined()) bias = f32_arg(info, 4, "bias", w.rows(), "matmul").Data();
      const bool accumulate = info.Length() > 5 && info[5].ToBoolean().Value();
      if (w.paired() && !context_->bf16_products()) throw_range(info.Env(), "matmul: a paired matrix needs bf16 products, which this context lacks");
      if (rows > 0) context_->matmul(out.Data(), x.Data(), rows, w, bias, accumulate);
    });
  }

  // embed(out, matrix, ids)
  void Embed(const Napi::CallbackInfo& info) {
    guarded([&] {
      const PackedMatrix& table = Matrix::From(info, 1);
      auto ids = typed_arg<int32_t, napi_int32_array>(info, 2, "ids", "Int32Array");
      const int count = static_cast<int>(ids.ElementLength());
      auto out = f32_arg(info, 0, "output", static_cast<size_t>(count) * table.cols(), "embed");
      for (int i = 0; i < count; i++) {
        if (ids[i] < 0 || ids[i] >= table.rows()) {
          throw_range(info.Env(), "token id " + std::to_string(ids[i]) + " is outside the embedding (" + std::to_string(table.rows()) + " rows)");
        }
      }
      context_->embed(out.Data(), table, ids.Data(), count);
    });
  }

  // rmsNorm(out, x, weight, rows, eps)
  void RmsNorm(const Napi::CallbackInfo& info) {
    guarded([&] {
      auto weight = typed_arg<float, napi_float32_array>(info, 2, "weight", "Float32Array");
      const int dim = static_cast<int>(weight.ElementLength());
      const int rows = int_arg(info, 3, "rows", 0);
      const size_t needed = static_cast<size_t>(rows) * dim;
      auto x = f32_arg(info, 1, "input", needed, "rmsNorm");
      auto out = f32_arg(info, 0, "output", needed, "rmsNorm");
      if (!info[4].IsNumber()) throw_type(info.Env(), "eps must be a number");
      const float eps = info[4].As<Napi::Number>().FloatValue();
      if (rows > 0 && dim > 0) context_->rms_norm(out.Data(), x.Data(), weight.Data(), rows, dim, eps);
    });
  }

  // The arguments of rope and ropeBackward: (x, rows, heads, headDim, positions, cos, sin).
  struct RopeArgs {
    float* x;
    int rows;
    int heads;
    int head_dim;
    const int32_t* positions;
    const float* cos;
    const float* sin;
  };

  static RopeArgs rope_args(const Napi::CallbackInfo& info, const char* op) {
    const int rows = int_arg(info, 1, "rows", 0);
    const int heads = int_arg(info, 2, "heads", 1);
    const int head_dim = int_arg(info, 3, "headDim", 2);
    if (head_dim % 2 != 0) throw_range(info.Env(), std::string(op) + ": headDim must be even");
    auto x = f32_arg(info, 0, "input", static_cast<size_t>(rows) * heads * head_dim, op);
    auto positions = i32_arg(info, 4, "positions", rows, op);
    auto cos = typed_arg<float, napi_float32_array>(info, 5, "cos", "Float32Array");
    auto sin = typed_arg<float, napi_float32_array>(info, 6, "sin", "Float32Array");
    const size_t half = head_dim / 2;
    const size_t table = std::min(cos.ElementLength(), sin.ElementLength());
    for (int r = 0; r < rows; r++) {
      if (positions[r] < 0 || (static_cast<size_t>(positions[r]) + 1) * half > table) {
        throw_range(info.Env(), std::string(op) + ": no table entry for position " + std::to_string(positions[r]));
      }
    }
    return {x.Data(), rows, heads, head_dim, positions.Data(), cos.Data(), sin.Data()};
  }

  // rope(x, rows, heads, headDim, positions, cos, sin)
  void Rope(const Napi::CallbackInfo& info) {
    guarded([&] {
      const RopeArgs a = rope_args(info, "rope");
      if (a.rows > 0) context_->rope(a.x, a.rows, a.heads, a.head_dim, a.positions, a.cos, a.sin);
    });
  }

  // attention(out, q, rows, keys, values, start, heads, kvHeads, headDim)
  void Attention(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int rows = int_arg(info, 2, "rows", 0);
      const int start = int_arg(info, 5, "start", 0);
      AttentionShape shape{int_arg(info, 6, "heads", 1), int_arg(info, 7, "kvHeads", 1), int_arg(info, 8, "headDim", 1)};
      if (shape.heads % shape.kv_heads != 0) throw_range(info.Env(), "attention: heads must be a multiple of kvHeads");
      const size_t width = static_cast<size_t>(rows) * shape.heads * shape.head_dim;
      auto q = f32_arg(info, 1, "queries", width, "attention");
      auto out = f32_arg(info, 0, "output", width, "attention");
      const size_t cached = (static_cast<size_t>(start) + rows) * shape.kv_heads * shape.head_dim;
      auto keys = typed_arg<float, napi_float32_array>(info, 3, "keys", "Float32Array");
      auto values = typed_arg<float, napi_float32_array>(info, 4, "values", "Float32Array");
      if (keys.ElementLength() < cached || values.ElementLength() < cached) {
        throw_range(info.Env(), "attention: the cache holds fewer than " + std::to_string(start + rows) + " positions");
      }
      if (rows > 0) context_->attention(out.Data(), q.Data(), rows, keys.Data(), values.Data(), start, shape);
    });
  }

  // siluMul(out, gate, up, length)
  void SiluMul(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int length = int_arg(info, 3, "length", 0);
      auto gate = f32_arg(info, 1, "gate", length, "siluMul");
      auto up = f32_arg(info, 2, "up", length, "siluMul");
      auto out = f32_arg(info, 0, "output", length, "siluMul");
      context_->silu_mul(out.Data(), gate.Data(), up.Data(), length);
    });
  }

  // addInPlace(x, y, length)
  void AddInPlace(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int length = int_arg(info, 2, "length", 0);
      auto x = f32_arg(info, 0, "x", length, "addInPlace");
      auto y = f32_arg(info, 1, "y", length, "addInPlace");
      context_->add(x.Data(), y.Data(), length);
    });
  }

  // gemm(c, a, b, m, n, k, transposeA, transposeB, alpha, accumulate)
  void Gemm(const Napi::CallbackInfo& info) {
    guarded([&] {
      GemmSpec spec{int_arg(info, 3, "m", 0), int_arg(info, 4, "n", 0), int_arg(info, 5, "k", 0), info[6].ToBoolean(), info[7].ToBoolean(),
                    number_arg(info, 8, "alpha"), info[9].ToBoolean()};
      const size_t m = spec.m, n = spec.n, k = spec.k;
      auto a = f32_arg(info, 1, "a", m * k, "gemm");
      auto b = f32_arg(info, 2, "b", k * n, "gemm");
      auto c = f32_arg(info, 0, "c", m * n, "gemm");
      context_->gemm(c.Data(), a.Data(), b.Data(), spec);
    });
  }

  // linearWeightBackward(dWeight, dBias | undefined, dy, x, rows, outDim, inDim)
  void LinearWeightBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int rows = int_arg(info, 4, "rows", 0);
      const int out_dim = int_arg(info, 5, "outDim", 1);
      const int in_dim = int_arg(info, 6, "inDim", 1);
      auto d_weight = f32_arg(info, 0, "dWeight", static_cast<size_t>(out_dim) * in_dim, "linearWeightBackward");
      float* d_bias = info[1].IsUndefined() ? nullptr : f32_arg(info, 1, "dBias", out_dim, "linearWeightBackward").Data();
      auto dy = f32_arg(info, 2, "dy", static_cast<size_t>(rows) * out_dim, "linearWeightBackward");
      auto x = f32_arg(info, 3, "x", static_cast<size_t>(rows) * in_dim, "linearWeightBackward");
      const bool bf16 = info.Length() > 7 && info[7].ToBoolean().Value();
      if (bf16 && !context_->bf16_products()) throw_range(info.Env(), "linearWeightBackward: this CPU has no bf16 products (AVX-512 BF16)");
      if (rows > 0) context_->linear_weight_backward(d_weight.Data(), d_bias, dy.Data(), x.Data(), rows, out_dim, in_dim, bf16);
    });
  }

  // rmsNormBackward(dx, dy, x, weight, rows, eps, accumulate, dWeight | undefined)
  void RmsNormBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      auto weight = typed_arg<float, napi_float32_array>(info, 3, "weight", "Float32Array");
      const int dim = static_cast<int>(weight.ElementLength());
      const int rows = int_arg(info, 4, "rows", 0);
      const size_t needed = static_cast<size_t>(rows) * dim;
      auto dx = f32_arg(info, 0, "dx", needed, "rmsNormBackward");
      auto dy = f32_arg(info, 1, "dy", needed, "rmsNormBackward");
      auto x = f32_arg(info, 2, "x", needed, "rmsNormBackward");
      const float eps = number_arg(info, 5, "eps");
      float* d_weight = info[7].IsUndefined() ? nullptr : f32_arg(info, 7, "dWeight", dim, "rmsNormBackward").Data();
      if (rows > 0 && dim > 0) context_->rms_norm_backward(dx.Data(), dy.Data(), x.Data(), weight.Data(), rows, dim, eps, info[6].ToBoolean(), d_weight);
    });
  }

  // ropeBackward(dx, rows, heads, headDim, positions, cos, sin)
  void RopeBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      const RopeArgs a = rope_args(info, "ropeBackward");
      if (a.rows > 0) context_->rope_backward(a.x, a.rows, a.heads, a.head_dim, a.positions, a.cos, a.sin);
    });
  }

  // siluMulBackward(dGate, dUp, dOut, gate, up, length)
  void SiluMulBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int length = int_arg(info, 5, "length", 0);
      auto d_gate = f32_arg(info, 0, "dGate", length, "siluMulBackward");
      auto d_up = f32_arg(info, 1, "dUp", length, "siluMulBackward");
      auto d_out = f32_arg(info, 2, "dOut", length, "siluMulBackward");
      auto gate = f32_arg(info, 3, "gate", length, "siluMulBackward");
      auto up = f32_arg(info, 4, "up", length, "siluMulBackward");
      context_->silu_mul_backward(d_gate.Data(), d_up.Data(), d_out.Data(), gate.Data(), up.Data(), length);
    });
  }

  // embedBackward(dTable, dOut, ids, dim)
  void EmbedBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int dim = int_arg(info, 3, "dim", 1);
      auto d_table = typed_arg<float, napi_float32_array>(info, 0, "dTable", "Float32Array");
      auto ids = typed_arg<int32_t, napi_int32_array>(info, 2, "ids", "Int32Array");
      const int count = static_cast<int>(ids.ElementLength());
      auto d_out = f32_arg(info, 1, "dOut", static_cast<size_t>(count) * dim, "embedBackward");
      const size_t vocab = d_table.ElementLength() / dim;
      for (int i = 0; i < count; i++) {
        if (ids[i] < 0 || static_cast<size_t>(ids[i]) >= vocab) {
          throw_range(info.Env(), "embedBackward: token id " + std::to_string(ids[i]) + " is outside the table (" + std::to_string(vocab) + " rows)");
        }
      }
      context_->embed_backward(d_table.Data(), d_out.Data(), ids.Data(), count, dim);
    });
  }

  // attentionBackward(dq, dKeys, dValues, dOut, q, keys, values, rows, start, heads, kvHeads, headDim)
  void AttentionBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int rows = int_arg(info, 7, "rows", 0);
      const int start = int_arg(info, 8, "start", 0);
      AttentionShape shape{int_arg(info, 9, "heads", 1), int_arg(info, 10, "kvHeads", 1), int_arg(info, 11, "headDim", 1)};
      if (shape.heads % shape.kv_heads != 0) throw_range(info.Env(), "attentionBackward: heads must be a multiple of kvHeads");
      const size_t width = static_cast<size_t>(rows) * shape.heads * shape.head_dim;
      const size_t cached = (static_cast<size_t>(start) + rows) * shape.kv_heads * shape.head_dim;
      auto dq = f32_arg(info, 0, "dq", width, "attentionBackward");
      auto d_keys = f32_arg(info, 1, "dKeys", cached, "attentionBackward");
      auto d_values = f32_arg(info, 2, "dValues", cached, "attentionBackward");
      auto d_out = f32_arg(info, 3, "dOut", width, "attentionBackward");
      auto q = f32_arg(info, 4, "q", width, "attentionBackward");
      auto keys = f32_arg(info, 5, "keys", cached, "attentionBackward");
      auto values = f32_arg(info, 6, "values", cached, "attentionBackward");
      if (rows > 0) {
        context_->attention_backward(dq.Data(), d_keys.Data(), d_values.Data(), d_out.Data(), q.Data(), keys.Data(), values.Data(), rows, start, shape);
      }
    });
  }

  // tokenLogprobSums(logits, rows, vocab, fractionPowers, maxes, sums, weighted)
  void TokenLogprobSums(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int rows = int_arg(info, 1, "rows", 0);
      const int vocab = int_arg(info, 2, "vocab", 1);
      auto logits = f32_arg(info, 0, "logits", static_cast<size_t>(rows) * vocab, "tokenLogprobs");
      auto powers = f64_arg(info, 3, "fractionPowers", 64, "tokenLogprobs");
      auto maxes = f64_arg(info, 4, "maxes", rows, "tokenLogprobs");
      auto sums = f64_arg(info, 5, "sums", rows, "tokenLogprobs");
      auto weighted = f64_arg(info, 6, "weighted", rows, "tokenLogprobs");
      context_->token_logprob_sums(logits.Data(), rows, vocab, powers.Data(), maxes.Data(), sums.Data(), weighted.Data());
    });
  }

  // tokenLogprobsBackward(logits, rows, vocab, targets, normalizers, gradients, fractionPowers)
  void TokenLogprobsBackward(const Napi::CallbackInfo& info) {
    guarded([&] {
      const int rows = int_arg(info, 1, "rows", 0);
      const int vocab = int_arg(info, 2, "vocab", 1);
      auto logits = f32_arg(info, 0, "logits", static_cast<size_t>(rows) * vocab, "tokenLogprobsBackward");
      auto targets = i32_arg(info, 3, "targets", rows, "tokenLogprobsBackward");
      auto normalizers = f64_arg(info, 4, "normalizers", rows, "tokenLogprobsBackward");
      auto gradients = f64_arg(info, 5, "gradients", rows, "tokenLogprobsBackward");
      auto powers = f64_arg(info, 6, "fractionPowers", 64, "tokenLogprobsBackward");
      for (int r = 0; r < rows; r++) {
        if (targets[r] < 0 || targets[r] >= vocab) {
          throw_range(info.Env(), "tokenLogprobsBackward: target token " + std::to_string(targets[r]) + " is outside the vocabulary (" + std::to_string(vocab) + ")");
        }
      }
      context_->token_logprobs_backward(logits.Data(), rows, vocab, targets.Data(), normalizers.Data(), gradients.Data(), powers.Data());
    });
  }

  // adamwStep(params, grads, expAvg, expAvgSq, beta1, beta2, eps, stepSize, biasCorrection2Sqrt, decay) → non-finite count
  Napi::Value AdamwStep(const Napi::CallbackInfo& info) {
    size_t non_finite = 0;
    guarded([&] {
      auto params = typed_arg<float, napi_float32_array>(info, 0, "params", "Float32Array");
      const size_t length = params.ElementLength();
      auto grads = f32_arg(info, 1, "grads", length, "adamwStep");
      auto exp_avg = f32_arg(info, 2, "expAvg", length, "adamwStep");
      auto exp_avg_sq = f32_arg(info, 3, "expAvgSq", length, "adamwStep");
      const AdamWScalars scalars{double_arg(info, 4, "beta1"), double_arg(info, 5, "beta2"), double_arg(info, 6, "eps"),
                                 double_arg(info, 7, "stepSize"), double_arg(info, 8, "biasCorrection2Sqrt"), double_arg(info, 9, "decay")};
      non_finite = context_->adamw_step(params.Data(), grads.Data(), exp_avg.Data(), exp_avg_sq.Data(), length, scalars);
    });
    return Napi::Number::New(info.Env(), static_cast<double>(non_finite));
  }

  // sumOfSquares(x) → Σ x²
  Napi::Value SumOfSquares(const Napi::CallbackInfo& info) {
    double sum = 0;
    guarded([&] {
      auto x = typed_arg<float, napi_float32_array>(info, 0, "x", "Float32Array");
      sum = context_->sum_of_squares(x.Data(), x.ElementLength());
    });
    return Napi::Number::New(info.Env(), sum);
  }

  // scale(x, factor)
  void Scale(const Napi::CallbackInfo& info) {
    guarded([&] {
      auto x = typed_arg<float, napi_float32_array>(info, 0, "x", "Float32Array");
      context_->scale(x.Data(), x.ElementLength(), double_arg(info, 1, "factor"));
    });
  }

  // writeMatrix(matrix, values, transposed): replaces every value of the matrix with values (f32,
  // row-major) rounded to its dtype or, with transposed, an f32 or paired matrix with valuesᵀ
  // (values cols × rows).
  void WriteMatrix(const Napi::CallbackInfo& info) {
    guarded([&] {
      PackedMatrix& w = Matrix::From(info, 0);
      auto values = f32_arg(info, 1, "values", static_cast<size_t>(w.rows()) * w.cols(), "writeMatrix");
      const bool transposed = info[2].ToBoolean().Value();
      if (transposed && w.dtype() != DType::F32 && !w.paired()) throw_range(info.Env(), "writeMatrix: only an f32 or a paired matrix takes transposed values");
      context_->write_matrix(w, values.Data(), transposed);
    });
  }

  std::unique_ptr<KernelContext> context_;
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("Context", Context::Define(env));
  exports.Set("Matrix", Matrix::Define(env));
  exports.Set("bestSimd", Napi::String::New(env, simd_name(detect_simd())));
  exports.Set("bf16Products", Napi::Boolean::New(env, detect_bf16_products()));
  return exports;
}

NODE_API_MODULE(flywheel_kernels, Init)

}  // namespace flywheel
