// AVX-512 attention backward for head_dim = 16·C, on blocks of 16 query rows at a time: the
// products run as small matrix products held in registers (scores and dP for 16 rows × 16 keys,
// dq for a few rows × the head, d_keys/d_values for a few keys × the head), so each key, value and
// gradient row is loaded once per block instead of once per query row. The backward has no bits to
// match (only the forward must equal the sampler's), so its sums run in whatever order is fastest,
// fixed for a given block.
#include <algorithm>

#include "attention.h"
#include "softmax_avx512.h"

#if FLYWHEEL_HAVE_X86

namespace flywheel {

namespace {

constexpr int kRows = kAttentionBackwardRows;

// out[i · ld + j] = Σ_d a[i · hd + d] · b_t[key j's dimension d] for the 16 rows of `a` and keys
// [0, keys) in blocks of 16 (transpose_keys' layout): 16 accumulators, one per row.
template <int C>
FLYWHEEL_AVX512 void products_with_keys(const float* a, const float* b_t, int keys, float* out, size_t ld) {
  constexpr int hd = 16 * C;
  for (int block = 0; block * 16 < keys; block++) {
    const float* b = b_t + static_cast<size_t>(block) * 16 * hd;
    __m512 acc[kRows];
#pragma GCC unroll 16
    for (int i = 0; i < kRows; i++) acc[i] = _mm512_setzero_ps();
    for (int d = 0; d < hd; d++) {
      const __m512 column = _mm512_loadu_ps(b + d * 16);
#pragma GCC unroll 16
      for (int i = 0; i < kRows; i++) acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * hd + d]), column, acc[i]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < kRows; i++) _mm512_storeu_ps(out + i * ld + block * 16, acc[i]);
  }
}

// dq rows: d_query[i] = Σ_j<n ds[i · ld + j] · keys[j], R rows at a time (R·C accumulators).
template <int C>
FLYWHEEL_AVX512 void query_gradients(const float* ds, size_t ld, int n, const float* keys, size_t stride, float* d_query, size_t q_stride,
                                     int rows) {
  constexpr int R = 16 / C;
  for (int first = 0; first < rows; first += R) {
    __m512 acc[R][C];
#pragma GCC unroll 16
    for (int r = 0; r < R; r++) {
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();
    }
    for (int j = 0; j < n; j++) {
      __m512 k[C];
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) k[c] = _mm512_loadu_ps(keys + j * stride + 16 * c);
#pragma GCC unroll 16
      for (int r = 0; r < R; r++) {
        const __m512 weight = _mm512_set1_ps(ds[(first + r) * ld + j]);
#pragma GCC unroll 16
        for (int c = 0; c < C; c++) acc[r][c] = _mm512_fmadd_ps(weight, k[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R && first + r < rows; r++) {
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) _mm512_storeu_ps(d_query + (first + r) * q_stride + 16 * c, acc[r][c]);
    }
  }
}

// d_keys[j] += Σ_i ds[i · ld + j] · q[i] and d_values[j] += Σ_i p[i · ld + j] · g[i] over the block's
// rows, T keys at a time from `first`, on W of the head's C chunks of 16 from chunk `c0`
// (2·T·W accumulators). Each row's W chunks of q and dO are loaded once for the T keys.
template <int C, int T, int W>
FLYWHEEL_AVX512 inline void key_gradients_at(const float* p, const float* ds, size_t ld, const float* q, const float* g, int rows, int first,
                                             int c0, float* d_keys, float* d_values) {
  constexpr int hd = 16 * C;
  __m512 dk[T][W], dv[T][W];
#pragma GCC unroll 16
  for (int t = 0; t < T; t++) {
#pragma GCC unroll 16
    for (int c = 0; c < W; c++) {
      dk[t][c] = _mm512_loadu_ps(d_keys + (first + t) * hd + 16 * (c0 + c));
      dv[t][c] = _mm512_loadu_ps(d_values + (first + t) * hd + 16 * (c0 + c));
    }
  }
  for (int i = 0; i < rows; i++) {
    __m512 qi[W], gi[W];
#pragma GCC unroll 16
    for (int c = 0; c < W; c++) {
      qi[c] = _mm512_loadu_ps(q + i * hd + 16 * (c0 + c));
      gi[c] = _mm512_loadu_ps(g + i * hd + 16 * (c0 + c));
      // Kept from being folded into each of the T multiply-adds as a memory operand: at W = 4 that
      // made the loop bound by loads (20 per 16 multiply-adds). At W = 2 the folded form measured faster.
      if constexpr (W == 4 && T > 1) __asm__("" : "+v"(qi[c]), "+v"(gi[c]));
    }
#pragma GCC unroll 16
    for (int t = 0; t < T; t++) {
      const __m512 dsv = _mm512_set1_ps(ds[i * ld + first + t]);
      const __m512 pv = _mm512_set1_ps(p[i * ld + first + t]);
#pragma GCC unroll 16
      for (int c = 0; c < W; c++) {
        dk[t][c] = _mm512_fmadd_ps(dsv, qi[c], dk[t][c]);
        dv[t][c] = _mm512_fmadd_ps(pv, gi[c], dv[t][c]);
      }
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < T; t++) {
#pragma GCC unroll 16
    for (int c = 0; c < W; c++) {
      _mm512_storeu_ps(d_keys + (first + t) * hd + 16 * (c0 + c), dk[t][c]);
      _mm512_storeu_ps(d_values + (first + t) * hd + 16 * (c0 + c), dv[t][c]);
    }
  }
}

// Heads wider than 4 chunks (128) run in windows of 4 chunks, two keys at a time, rather than all
// 8 chunks one key at a time: each load of q and dO then serves two keys.
template <int C>
FLYWHEEL_AVX512 void key_gradients(const float* p, const float* ds, size_t ld, const float* q, const float* g, int rows, int n, float* d_keys,
                                   float* d_values) {
  constexpr int W = C > 4 ? 4 : C;
  constexpr int T = 8 / W;
  for (int c0 = 0; c0 < C; c0 += W) {
    int first = 0;
    for (; first + T <= n; first += T) key_gradients_at<C, T, W>(p, ds, ld, q, g, rows, first, c0, d_keys, d_values);
    for (; first < n; first++) key_gradients_at<C, 1, W>(p, ds, ld, q, g, rows, first, c0, d_keys, d_values);
  }
}

template <int C>
FLYWHEEL_AVX512 void backward_block(const AttentionBackwardBlock& block) {
  constexpr int hd = 16 * C;
  const int rows = block.rows;
  // Keys visible to the block's last row; scores are computed for whole blocks of 16 keys.
  const int n = block.first_visible + rows - 1;
  const size_t ld = (static_cast<size_t>(n) + 15) / 16 * 16;
  float* p = block.scratch;
  float* ds = p + kRows * ld;
  float* q = ds + kRows * ld;  // the rows' queries, then dO, then scaled queries: kRows × hd each
  float* g = q + kRows * hd;
  float* scaled = g + kRows * hd;
  const __m512 scale = _mm512_set1_ps(block.scale);
  for (int head = 0; head < block.heads; head++) {
    // The block's rows of this head, contiguous; rows past `rows` are zeros.
    for (int i = 0; i < kRows; i++) {
#pragma GCC unroll 16
      for (int c = 0; c < C; c++) {
        __m512 qv = _mm512_setzero_ps(), gv = _mm512_setzero_ps();
        if (i < rows) {
          const size_t at = i * block.row_stride + head * hd + 16 * c;
          qv = _mm512_loadu_ps(block.query + at);
          gv = _mm512_loadu_ps(block.d_out + at);
        }
        _mm512_storeu_ps(q + i * hd + 16 * c, qv);
        _mm512_storeu_ps(g + i * hd + 16 * c, gv);
        _mm512_storeu_ps(scaled + i * hd + 16 * c, _mm512_mul_ps(qv, scale));
      }
    }
    products_with_keys<C>(scaled, block.keys_t, n, p, ld);
    products_with_keys<C>(g, block.values_t, n, ds, ld);
    // P = softmax over each row's visible keys; dS = P·(dP − Σ P·dP)·scale; zero past the visible
    // keys and on padding rows, so the products below can run over whole rows.
    for (int i = 0; i < kRows; i++) {
      float* pi = p + i * ld;
      float* dsi = ds + i * ld;
      const int visible = i < rows ? block.first_visible + i : 0;
      if (visible > 0) {
        // Masked steps of 16 (the last one partial), so every pass stays vector operations. The
        // unnormalized e = exp(s − max) give both sums in one pass (Σ e and Σ e·dP); the second
        // writes P = e / Σ e and dS over them.
        const __m512 max = _mm512_set1_ps(max16(pi, visible));
        __m512 sum = _mm512_setzero_ps(), weighted = _mm512_setzero_ps();
        for (int j = 0; j < visible; j += 16) {
          const __mmask16 lanes = lanes_left(visible - j);
          const __m512 e = _mm512_maskz_mov_ps(lanes, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, pi + j), max)));
          _mm512_mask_storeu_ps(pi + j, lanes, e);
          sum = _mm512_add_ps(sum, e);
          weighted = _mm512_fmadd_ps(e, _mm512_maskz_loadu_ps(lanes, dsi + j), weighted);
        }
        const float inverse = 1.0f / _mm512_reduce_add_ps(sum);
        const __m512 normalize = _mm512_set1_ps(inverse);
        const __m512 mean = _mm512_set1_ps(_mm512_reduce_add_ps(weighted) * inverse);
        for (int j = 0; j < visible; j += 16) {
          const __mmask16 lanes = lanes_left(visible - j);
          const __m512 pj = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, pi + j), normalize);
          _mm512_mask_storeu_ps(pi + j, lanes, pj);
          _mm512_mask_storeu_ps(dsi + j, lanes, _mm512_mul_ps(_mm512_mul_ps(pj, _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, dsi + j), mean)), scale));
        }
      }
      std::fill(pi + visible, pi + ld, 0.0f);
      std::fill(dsi + visible, dsi + ld, 0.0f);
    }
    query_gradients<C>(ds, ld, n, block.keys, block.stride, block.d_query + head * hd, block.row_stride, rows);
    key_gradients<C>(p, ds, ld, q, g, rows, n, block.d_keys, block.d_values);
  }
}

}  // namespace

AttentionBackwardBlockKernel attention_backward_block_avx512(int head_dim) {
  if (head_dim == 32) return backward_block<2>;
  if (head_dim == 64) return backward_block<4>;
  if (head_dim == 128) return backward_block<8>;
  return nullptr;
}

}  // namespace flywheel

#endif
