'use strict';
// The compiled addon (node-gyp builds it at npm install; see binding.gyp).
module.exports = require('./build/Release/hnsw_int8.node');
