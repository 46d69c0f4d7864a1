import { createWorker } from 'tesseract.js';
try { const w = await createWorker('eng', 1, { cacheMethod: 'none' }); await w.terminate(); console.log('loaded?!'); } catch (e) { console.log('failed as expected:', String(e).slice(0, 120)); }
process.exit(0);
