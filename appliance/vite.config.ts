import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import preact from '@preact/preset-vite';
import { defineConfig, type Plugin } from 'vite';

const root = import.meta.dirname;
const outDir = path.resolve(root, '../dist/appliance');

/** Writes .br and .gz beside each text file, which @fastify/static serves by Accept-Encoding (no compression per request). */
function precompress(): Plugin {
  const compressible = /\.(js|mjs|css|html|svg|json|txt)$/;
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(path.join(dir, entry.name)) : [path.join(dir, entry.name)]));
  return {
    name: 'hearth-precompress',
    apply: 'build',
    closeBundle() {
      for (const file of walk(outDir).filter((name) => compressible.test(name))) {
        const bytes = readFileSync(file);
        if (bytes.length < 1024) continue;
        writeFileSync(`${file}.gz`, gzipSync(bytes, { level: 9 }));
        writeFileSync(`${file}.br`, brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

/** The web UI: built into dist/appliance and served by the service at / (plugins/web-ui). */
export default defineConfig({
  root,
  // Absolute asset URLs: a relative base breaks deep links such as /chat/123.
  base: '/',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false }), precompress()],
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // The polyfill would be an inline script, which the CSP refuses.
    modulePreload: { polyfill: false },
    // Everything stays a file of this origin (no data: URLs for scripts or workers).
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8000' } },
});
