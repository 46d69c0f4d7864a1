/** Worker-thread entry: builds and installs the default embedder off the service's event loop. */
import { parentPort, workerData } from 'node:worker_threads';
import { installDefaultModel, type InstallDefaultOptions } from './build.js';

const options = workerData as Omit<InstallDefaultOptions, 'progress'>;
const manifest = await installDefaultModel({ ...options, progress: (message) => parentPort!.postMessage({ type: 'progress', message }) });
parentPort!.postMessage({ type: 'done', result: manifest });
