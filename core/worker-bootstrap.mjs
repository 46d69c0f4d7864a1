// From source (vitest, tsx) only: registers tsx's loader in this worker thread, then loads the
// TypeScript entry named by workerData.entry (the embedding thread, the default embedder's build).
import { workerData } from 'node:worker_threads';
const { register } = await import('tsx/esm/api');
register();
await import(workerData.entry);
