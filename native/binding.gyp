{
  "targets": [
    {
      "target_name": "flywheel_kernels",
      "sources": [
        "src/addon.cc",
        "src/attention.cc",
        "src/attention_avx2.cc",
        "src/attention_avx512.cc",
        "src/attention_backward_avx512.cc",
        "src/context.cc",
        "src/cpu.cc",
        "src/matmul.cc",
        "src/matmul_avx2.cc",
        "src/matmul_avx512.cc",
        "src/matmul_bf16_avx512.cc",
        "src/matmul_scalar.cc",
        "src/ops/attention.cc",
        "src/ops/embedding.cc",
        "src/ops/gemm.cc",
        "src/ops/linear.cc",
        "src/ops/optimizer.cc",
        "src/ops/rms_norm.cc",
        "src/ops/rope.cc",
        "src/ops/silu_mul.cc",
        "src/ops/token_logprobs.cc",
        "src/packed_matrix.cc",
        "src/thread_pool.cc",
        "src/vector_ops_avx2.cc",
        "src/vector_ops_avx512.cc",
        "src/vector_ops_scalar.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      # SWALLOW_UNTHROWABLE: while a worker thread is terminated, an error that cannot be raised in
      # JavaScript is dropped instead of rethrown (which would abort the process).
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-O3", "-ffp-contract=off", "-fno-math-errno", "-fexceptions", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "ldflags": ["-pthread"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUSFLAGS": ["-O3", "-ffp-contract=off", "-fno-math-errno"]
      },
      "msvs_settings": {"VCCLCompilerTool": {"ExceptionHandling": 1}}
    }
  ]
}
