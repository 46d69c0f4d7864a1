{
  "targets": [
    {
      "target_name": "hnsw_int8",
      "sources": ["hnsw-int8.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!(node -p \"require('path').join(require('path').dirname(require.resolve('hnswlib-node/package.json')), 'src')\")"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-O3", "-std=c++17"],
      "xcode_settings": { "GCC_ENABLE_CPP_EXCEPTIONS": "YES", "CLANG_CXX_LANGUAGE_STANDARD": "c++17" }
    }
  ]
}
