// AVX-512 attention for one query head with head_dim = 16·C: the AVX2 kernels' loops on 16-float
// registers, half the instructions per cached key and value. The query and the output stay in
// registers; S independent chains over positions hide the FMA latency, in a fixed order for a
// given `visible`, so decode and prefill agree bit for bit. (The backward is in
// attention_backward_avx512.cc.)
#include "attention.h"

#include <algorithm>

#include "softmax_avx512.h"

#if FLYWHEEL_HAVE_X86

namespace flywheel {

namespace {

// Chains over positions: enough independent accumulators (S·C) to keep both FMA pipes busy.
constexpr int chains(int c) { return c >= 8 ? 1 : 8 / c; }

// Adds the S accumulator chains of each of the C vectors into chain 0 in a fixed tree,
// (0 + 1) + (2 + 3), so the result does not depend on how the work was split.
template <int S, int C>
FLYWHEEL_AVX512 inline void sum_chains(__m512 (&acc)[S][C]) {
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) {
    if constexpr (S == 4) {
      acc[0][c] = _mm512_add_ps(_mm512_add_ps(acc[0][c], acc[1][c]), _mm512_add_ps(acc[2][c], acc[3][c]));
    } else if constexpr (S == 2) {
      acc[0][c] = _mm512_add_ps(acc[0][c], acc[1][c]);
    }
  }
}

// The four sums of four 16-lane vectors: each folded to 8 lanes, then one transposing reduction.
FLYWHEEL_AVX512 inline __m128 reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
  const auto fold = [](__m512 v) FLYWHEEL_AVX512 { return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))); };
  const __m256 ab = _mm256_hadd_ps(fold(a), fold(b));
  const __m256 cd = _mm256_hadd_ps(fold(c), fold(d));
  const __m256 abcd = _mm256_hadd_ps(ab, cd);
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

template <int C>
FLYWHEEL_AVX512 inline __m128 dot4(const __m512* x, const float* rows, size_t stride) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) {
    s0 = _mm512_fmadd_ps(x[c], _mm512_loadu_ps(rows + 16 * c), s0);
    s1 = _mm512_fmadd_ps(x[c], _mm512_loadu_ps(rows + stride + 16 * c), s1);
    s2 = _mm512_fmadd_ps(x[c], _mm512_loadu_ps(rows + 2 * stride + 16 * c), s2);
    s3 = _mm512_fmadd_ps(x[c], _mm512_loadu_ps(rows + 3 * stride + 16 * c), s3);
  }
  return reduce4(s0, s1, s2, s3);
}

template <int C>
FLYWHEEL_AVX512 inline float dot1(const __m512* x, const float* row) {
  __m512 s = _mm512_setzero_ps();
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) s = _mm512_fmadd_ps(x[c], _mm512_loadu_ps(row + 16 * c), s);
  return _mm_cvtss_f32(reduce4(s, _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()));
}

template <int C>
FLYWHEEL_AVX512 inline void dots(const __m512* x, const float* rows, size_t stride, int visible, float* out) {
  int j = 0;
  for (; j + 4 <= visible; j += 4) _mm_storeu_ps(out + j, dot4<C>(x, rows + j * stride, stride));
  for (; j < visible; j++) out[j] = dot1<C>(x, rows + j * stride);
}

// vector_ops_avx2's exp_shifted, 16 values a step: its 8-lane sum gets the low half, then the
// high half, as two of its steps would; the horizontal sum and the tail are its own.
FLYWHEEL_AVX512 float exp_shifted(float* x, int n, float shift) {
  const __m512 sv = _mm512_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), sv));
    _mm512_storeu_ps(x + i, e);
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    sum = _mm256_add_ps(sum, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));
  }
  if (i + 8 <= n) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_castps256_ps512(_mm256_loadu_ps(x + i)), sv));
    _mm256_storeu_ps(x + i, _mm512_castps512_ps256(e));
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(e));
    i += 8;
  }
  __m128 folded = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
  folded = _mm_add_ps(folded, _mm_movehl_ps(folded, folded));
  folded = _mm_add_ss(folded, _mm_movehdup_ps(folded));
  float total = _mm_cvtss_f32(folded);
  if (i < n) {
    alignas(64) float tail[16] = {};
    for (int j = 0; i + j < n; j++) tail[j] = x[i + j] - shift;
    _mm512_store_ps(tail, exp16(_mm512_load_ps(tail)));
    for (int j = 0; i + j < n; j++) {
      x[i + j] = tail[j];
      total += tail[j];
    }
  }
  return total;
}

// Softmax of `visible` scores (in place) and the weighted sum of the values into out.
template <int C>
FLYWHEEL_AVX512 void softmax_values(float* scores, const float* values, size_t stride, int visible, float* out) {
  const float max = max16(scores, visible);
  const float inverse_sum = 1.0f / exp_shifted(scores, visible, max);

  constexpr int S = chains(C);
  __m512 acc[S][C];
#pragma GCC unroll 16
  for (int s = 0; s < S; s++) {
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) acc[s][c] = _mm512_setzero_ps();
  }
  int j = 0;
  for (; j + S <= visible; j += S) {
#pragma GCC unroll 16
    for (int s = 0; s < S; s++) {
      const float* v = values + (j + s) * stride;
      const __m512 weight = _mm512_set1_ps(scores[j + s]);
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[s][c] = _mm512_fmadd_ps(weight, _mm512_loadu_ps(v + 16 * c), acc[s][c]);
    }
  }
  for (; j < visible; j++) {
    const float* v = values + j * stride;
    const __m512 weight = _mm512_set1_ps(scores[j]);
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) acc[0][c] = _mm512_fmadd_ps(weight, _mm512_loadu_ps(v + 16 * c), acc[0][c]);
  }
  sum_chains(acc);
  const __m512 normalize = _mm512_set1_ps(inverse_sum);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) _mm512_storeu_ps(out + 16 * c, _mm512_mul_ps(acc[0][c], normalize));
}

template <int C>
FLYWHEEL_AVX512 void head_kernel(const AttentionHead& head) {
  __m512 q[C];
  const __m512 scale = _mm512_set1_ps(head.scale);
#pragma GCC unroll 16
  for (int c = 0; c < C; c++) q[c] = _mm512_mul_ps(_mm512_loadu_ps(head.query + 16 * c), scale);
  dots<C>(q, head.keys, head.stride, head.visible, head.scores);
  softmax_values<C>(head.scores, head.values, head.stride, head.visible, head.out);
}

// Scores of M query heads (scaled queries q, M × 16·C) against a block of 16 transposed keys:
// out[m · ld + p] = the score of head m and key p. Lane i of dot4's accumulator is the chain over
// chunks c of q[16c + i]·k[16c + i]; here that chain runs for 16 keys at once in one register, and
// reduce4's tree (lanes i and i + 8 folded, then pairs, then pairs of pairs, then the two halves) is
// the same adds across those registers, so every score has dot4's bits.
template <int C, int M>
FLYWHEEL_AVX512 inline void transposed_tile(const float* q, const float* kt, size_t ld, float* out) {
  // kt: one block of transpose_keys' layout (16 · hd floats).
  constexpr int hd = 16 * C;
  // Pending partial trees, filled lane pair by lane pair so that few registers are live:
  // fold(i) = lane i + lane i + 8; pair(p) = fold(2p) + fold(2p + 1); half(h) = pair(2h) + pair(2h + 1).
  __m512 pending_fold[M], pending_pair[M], pending_half[M];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    __m512 low[M], high[M];
#pragma GCC unroll 2
    for (int part = 0; part < 2; part++) {
      const int lane = i + 8 * part;
      __m512 acc[M];
#pragma GCC unroll 8
      for (int m = 0; m < M; m++) acc[m] = _mm512_setzero_ps();
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) {
        const __m512 k = _mm512_loadu_ps(kt + (16 * c + lane) * 16);
#pragma GCC unroll 8
        for (int m = 0; m < M; m++) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(q[m * hd + 16 * c + lane]), k, acc[m]);
      }
#pragma GCC unroll 8
      for (int m = 0; m < M; m++) {
        if (part == 0) {
          low[m] = acc[m];
        } else {
          high[m] = acc[m];
        }
      }
    }
#pragma GCC unroll 8
    for (int m = 0; m < M; m++) {
      __m512 x = _mm512_add_ps(low[m], high[m]);
      if (i % 2 == 0) {
        pending_fold[m] = x;
        continue;
      }
      x = _mm512_add_ps(pending_fold[m], x);
      if (i % 4 == 1) {
        pending_pair[m] = x;
        continue;
      }
      x = _mm512_add_ps(pending_pair[m], x);
      if (i == 3) {
        pending_half[m] = x;
        continue;
      }
      _mm512_storeu_ps(out + m * ld, _mm512_add_ps(pending_half[m], x));
    }
  }
}

// The weighted sum of P queries (consecutive, scores `ld` apart) over positions [begin, end), a
// multiple of S long: softmax_values' S chains, their running sums kept in `sums` (S·C vectors per
// query) between spans.
template <int C, int P>
FLYWHEEL_AVX512 inline void weighted_span(float* sums, const float* scores, size_t ld, const float* values, size_t stride, int begin,
                                          int end) {
  constexpr int S = chains(C);
  __m512 acc[P][S][C];
#pragma GCC unroll 2
  for (int p = 0; p < P; p++) {
#pragma GCC unroll 4
    for (int s = 0; s < S; s++) {
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[p][s][c] = _mm512_loadu_ps(sums + p * S * 16 * C + (s * C + c) * 16);
    }
  }
  for (int j = begin; j < end; j += S) {
#pragma GCC unroll 4
    for (int s = 0; s < S; s++) {
      const float* v = values + (j + s) * stride;
      __m512 row[C];
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) {
        row[c] = _mm512_loadu_ps(v + 16 * c);
        // One load for the P queries: kept from being folded into each multiply-add as a memory operand.
        if constexpr (P > 1) __asm__("" : "+v"(row[c]));
      }
#pragma GCC unroll 2
      for (int p = 0; p < P; p++) {
        const __m512 weight = _mm512_set1_ps(scores[p * ld + j + s]);
#pragma GCC unroll 16
        for (int c = 0; c < C; c++) acc[p][s][c] = _mm512_fmadd_ps(weight, row[c], acc[p][s][c]);
      }
    }
  }
#pragma GCC unroll 2
  for (int p = 0; p < P; p++) {
#pragma GCC unroll 4
    for (int s = 0; s < S; s++) {
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) _mm512_storeu_ps(sums + p * S * 16 * C + (s * C + c) * 16, acc[p][s][c]);
    }
  }
}

template <int C>
FLYWHEEL_AVX512 void rows_kernel(const AttentionRowsTransposed& a) {
  constexpr int hd = 16 * C;
  constexpr int S = chains(C);
  constexpr int sum_floats = S * C * 16;
  static_assert(sum_floats == 8 * 16, "attention_rows_scratch keeps 8 vectors per query");
  const int queries = a.rows * a.heads;
  const size_t ld = a.keys_t_stride;
  float* scores = a.scratch;
  float* q = scores + static_cast<size_t>(queries) * ld;
  float* sums = q + static_cast<size_t>(queries) * hd;
  float* inverse = sums + static_cast<size_t>(queries) * sum_floats;
  const auto visible = [&](int query) { return a.first_visible + query / a.heads; };

  const __m512 scale = _mm512_set1_ps(a.scale);
  for (int query = 0; query < queries; query++) {
    const float* from = a.query + (query / a.heads) * a.row_stride + (query % a.heads) * hd;
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) _mm512_storeu_ps(q + query * hd + 16 * c, _mm512_mul_ps(_mm512_loadu_ps(from + 16 * c), scale));
  }

  // Scores: blocks of 16 keys outer, so a block's transposed keys serve every query from L1, four
  // queries a tile (each key vector loaded once for all four; wider tiles spill registers). Past a
  // query's last key, the last block's extra scores land in its scratch row and are never read.
  const int blocks = (visible(queries - 1) + 15) / 16;
  for (int b = 0; b < blocks; b++) {
    const float* block = a.keys_t + b * 16 * hd;
    int query = 0;
    for (; query + 4 <= queries; query += 4) {
      if (16 * b < visible(query + 3)) transposed_tile<C, 4>(q + query * hd, block, ld, scores + query * ld + 16 * b);
    }
    for (; query < queries; query++) {
      if (16 * b < visible(query)) transposed_tile<C, 1>(q + query * hd, block, ld, scores + query * ld + 16 * b);
    }
  }

  for (int query = 0; query < queries; query++) {
    float* row = scores + query * ld;
    const float max = max16(row, visible(query));
    inverse[query] = 1.0f / exp_shifted(row, visible(query), max);
  }

  // The weighted sums: spans of positions outer, each span's values read by every query while in
  // L1; a query's chains take positions up to the last multiple of S below its visible count, as
  // softmax_values' main loop does; its remainder follows below, on chain 0.
  std::fill(sums, sums + static_cast<size_t>(queries) * sum_floats, 0.0f);
  constexpr int span = 64;
  const int last_main = visible(queries - 1) / S * S;
  for (int begin = 0; begin < last_main; begin += span) {
    int query = 0;
    while (query < queries) {
      const int end = std::min(begin + span, visible(query) / S * S);
      const bool pair = query + 1 < queries && visible(query + 1) == visible(query);
      if (begin < end) {
        if (pair) {
          weighted_span<C, 2>(sums + query * sum_floats, scores + query * ld, ld, a.values, a.stride, begin, end);
        } else {
          weighted_span<C, 1>(sums + query * sum_floats, scores + query * ld, ld, a.values, a.stride, begin, end);
        }
      }
      query += pair ? 2 : 1;
    }
  }
  for (int query = 0; query < queries; query++) {
    const float* row = scores + query * ld;
    const float* sum = sums + query * sum_floats;
    __m512 acc[S][C];
#pragma GCC unroll 4
    for (int s = 0; s < S; s++) {
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[s][c] = _mm512_loadu_ps(sum + (s * C + c) * 16);
    }
    for (int j = visible(query) / S * S; j < visible(query); j++) {
      const float* v = a.values + j * a.stride;
      const __m512 weight = _mm512_set1_ps(row[j]);
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[0][c] = _mm512_fmadd_ps(weight, _mm512_loadu_ps(v + 16 * c), acc[0][c]);
    }
    float* out = a.out + (query / a.heads) * a.row_stride + (query % a.heads) * hd;
    const __m512 normalize = _mm512_set1_ps(inverse[query]);
    sum_chains(acc);
#pragma GCC unroll 16
    for (int c = 0; c < C; c++) _mm512_storeu_ps(out + 16 * c, _mm512_mul_ps(acc[0][c], normalize));
  }
}

}  // namespace

AttentionTransposedKernel attention_transposed_avx512(int head_dim) {
  if (head_dim == 32) return rows_kernel<2>;
  if (head_dim == 64) return rows_kernel<4>;
  if (head_dim == 128) return rows_kernel<8>;
  return nullptr;
}

AttentionHeadKernel attention_head_avx512(int head_dim) {
  if (head_dim == 32) return head_kernel<2>;
  if (head_dim == 64) return head_kernel<4>;
  if (head_dim == 128) return head_kernel<8>;
  return nullptr;
}

}  // namespace flywheel

#endif
