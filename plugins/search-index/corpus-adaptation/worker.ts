/** Worker-thread entry: adapts the static embedder to the collection off the service's event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { buildAdaptedModel, type AdaptOptions } from './build.js';

const result = await buildAdaptedModel(workerData as AdaptOptions, (message) => parentPort!.postMessage({ type: 'progress', message }));
parentPort!.postMessage({ type: 'done', result });
