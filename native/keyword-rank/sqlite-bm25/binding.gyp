{
  "targets": [
    {
      "target_name": "hearth_bm25",
      "type": "loadable_module",
      "sources": ["hearth-bm25.c"],
      "include_dirs": [
        "<!(node -p \"require('path').join(require('path').dirname(require.resolve('better-sqlite3/package.json')), 'deps', 'sqlite3')\")"
      ],
      "cflags": ["-O2"],
      "libraries": ["-lm"]
    }
  ]
}
