'use strict';
// The compiled SQLite extension (node-gyp builds it at npm install; see binding.gyp) and its entry point.
module.exports = {
  file: require('path').join(__dirname, 'build', 'Release', 'hearth_bm25.node'),
  entryPoint: 'sqlite3_hearthbm25_init',
};
