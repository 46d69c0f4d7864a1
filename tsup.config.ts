import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { server: 'core/server.ts', 'issue-license': 'scripts/issue-license.ts', cli: 'appliance/cli/main.ts', 'extract-worker': 'plugins/ingestion/extract-worker.ts', 'default-embedder-worker': 'plugins/search-index/default-embedder/worker.ts', 'corpus-adaptation-worker': 'plugins/search-index/corpus-adaptation/worker.ts', 'embedder-thread': 'native/embeddings/embedder-thread.ts', 'gpu-self-test-child': 'native/llm/gpu-self-test-child.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  outDir: 'dist',
  // The web UI's build (dist/appliance, by Vite) is not tsup's to remove.
  clean: ['!appliance/**'],
  sourcemap: true,
  splitting: true,
  // Native addons and their loaders stay in node_modules.
  skipNodeModulesBundle: true,
});
