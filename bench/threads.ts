/**
 * Inference threads on this box: stories260K (test/fixtures/models) decode and prompt tokens/s at each
 * N_THREADS from 1 to the cores present (and one past them), node-llama-cpp called directly with the
 * same settings the service uses; the ratios pick the hardware profile's N_THREADS rule
 * (core/hardware-profile). Prints one JSON line per thread count, then the ratios to 1 thread.
 *
 *   npx tsx bench/threads.ts      BENCH_THREADS_RUNS (5), BENCH_THREADS_TOKENS (200), BENCH_THREADS_MIN (1), BENCH_THREADS_MAX (cores + 1)
 */
import os from 'node:os';
import { LlamaCompletion, LlamaLogLevel, getLlama } from 'node-llama-cpp';
import { STORIES_GGUF } from '../test/fixtures/models.js';

const RUNS = Number(process.env.BENCH_THREADS_RUNS ?? 5);
const TOKENS = Number(process.env.BENCH_THREADS_TOKENS ?? 200);
const MAX = Number(process.env.BENCH_THREADS_MAX ?? os.availableParallelism() + 1);
const MIN = Number(process.env.BENCH_THREADS_MIN ?? 1);
const PROMPT = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sun with her friends. One day,';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const llama = await getLlama({ gpu: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: STORIES_GGUF });
const results: Array<{ threads: number; decode_tps: number; prompt_ms: number; wall_ms: number }> = [];
for (let threads = MIN; threads <= MAX; threads++) {
  const context = await model.createContext({ contextSize: 512, threads });
  const decode: number[] = [];
  const wall: number[] = [];
  const firstToken: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const sequence = context.getSequence();
    const completion = new LlamaCompletion({ contextSequence: sequence });
    const started = performance.now();
    let first = 0;
    let tokens = 0;
    await completion.generateCompletion(PROMPT, {
      maxTokens: TOKENS,
      temperature: 0,
      onToken: (chunk) => {
        if (!first) first = performance.now();
        tokens += chunk.length;
      },
    });
    const ended = performance.now();
    completion.dispose();
    sequence.dispose();
    if (run === 0) continue; // warm-up
    firstToken.push(first - started);
    wall.push(ended - started);
    decode.push(((tokens - 1) / (ended - first)) * 1000);
  }
  await context.dispose();
  results.push({ threads, decode_tps: Math.round(median(decode)), prompt_ms: Math.round(median(firstToken) * 10) / 10, wall_ms: Math.round(median(wall)) });
  console.log(JSON.stringify(results.at(-1)));
}
const base = results[0];
console.log(JSON.stringify({ cores: os.availableParallelism(), ratios_to_1_thread: results.map((r) => ({ threads: r.threads, decode: +(r.decode_tps / base.decode_tps).toFixed(2), wall: +(r.wall_ms / base.wall_ms).toFixed(2) })) }));
await model.dispose();
await llama.dispose();
