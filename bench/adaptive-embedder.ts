/**
 * The corpus-adaptive default embedder experiment (issue 16 item 5): build time and peak RSS of the blended
 * build (corpus co-occurrence + WordNet PPMI, SVD to 256 dimensions, token table, ONNX bytes) at N chunks.
 *
 * Chunks: the markdown of the eval corpus rule (scripts/eval/corpus.ts: every *.md under node_modules, 1-300 KB,
 * deduplicated), cut into paragraph-packed chunks of about 1,000 characters, then cycled up to N:
 *   repeat    the real chunks again and again (the same distinct pairs; the counts grow);
 *   shuffled  each copy after the first has its words shuffled within the chunk (seeded): the vocabulary's
 *             distribution stays, the distinct pairs grow as a larger collection's would (an upper bound);
 *   fixed     the repeated chunks loaded, but the fixed table built (no corpus): the baseline.
 * Each source runs in a child process of its own (`npx tsx`, so its RSS includes tsx's loader), which reports
 * its VmHWM (peak RSS, every thread) once the chunks are in memory and at the end, and each stage's seconds.
 *
 * `npx tsx bench/adaptive-embedder.ts` (HEARTH_BENCH_CHUNKS=100000, HEARTH_BENCH_SOURCES=fixed,repeat,shuffled,
 * HEARTH_BENCH_WEIGHT=1). Linux only (/proc). Machine load: `uptime` before and after each child.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { buildDefaultModelBytes, vocabularyTokens } from '../plugins/search-index/default-embedder/build.js';
import { blendCorpus, contentTokenMask, CooccurrenceCounts, defaultTokenizer } from '../scripts/eval/adaptive-corpus.js';
import { mulberry32 } from '../plugins/search-index/default-embedder/linalg.js';
import { listCorpus } from '../scripts/eval/corpus.js';
import { peakRssMiB, ROOT } from './harness.js';

const MB = 1024 * 1024;

/** This process's peak RSS (VmHWM), MiB. */
const peakRss = () => peakRssMiB(process.pid) ?? 0;

/** Paragraph-packed chunks of about `size` characters. */
export function chunksOf(text: string, size = 1000): string[] {
  const out: string[] = [];
  let current = '';
  for (const paragraph of text.split(/\n\s*\n/)) {
    if (current && current.length + paragraph.length > size) {
      out.push(current);
      current = '';
    }
    current = current ? `${current}\n\n${paragraph}` : paragraph;
    while (current.length > size * 2) {
      out.push(current.slice(0, size));
      current = current.slice(size);
    }
  }
  if (current.trim()) out.push(current);
  return out;
}

/** The text's words in a seeded random order (Fisher-Yates): the same vocabulary, pairs that real text never makes. */
export function shuffledWords(text: string, random: () => number): string {
  const words = text.split(/\s+/);
  for (let j = words.length - 1; j > 0; j--) {
    const k = Math.floor(random() * (j + 1));
    [words[j], words[k]] = [words[k], words[j]];
  }
  return words.join(' ');
}

async function child(source: string, n: number, weight: number): Promise<void> {
  const base: string[] = [];
  for (const doc of await listCorpus(path.join(ROOT, 'node_modules'))) base.push(...chunksOf(await readFile(doc.file, 'utf8')));
  const random = mulberry32(20261127);
  const chunks: string[] = [];
  for (let i = 0; i < n; i++) {
    const text = base[i % base.length];
    chunks.push(source === 'shuffled' && i >= base.length ? shuffledWords(text, random) : text);
  }
  const loadedPeak = peakRss();
  let t = performance.now();
  const tokenizer = await defaultTokenizer();
  const content = contentTokenMask(await vocabularyTokens());
  const counts = new CooccurrenceCounts(content.length);
  if (source !== 'fixed') for (const text of chunks) counts.addChunk(tokenizer.encode(text, { add_special_tokens: false }).ids, content, 5);
  const countSeconds = (performance.now() - t) / 1000;
  const countedPeak = peakRss();
  t = performance.now();
  const built = await buildDefaultModelBytes(source === 'fixed' ? {} : { extendMatrix: blendCorpus({ counts, weight, newRows: false }) });
  const buildSeconds = (performance.now() - t) / 1000;
  const cpu = process.cpuUsage();
  console.log(
    JSON.stringify({
      source,
      chunks: n,
      distinctBaseChunks: base.length,
      contentTokens: counts.tokens,
      pairs: counts.pairs,
      pairTableMB: +(counts.bytes / MB).toFixed(1),
      countSeconds: +countSeconds.toFixed(1),
      buildSeconds: +buildSeconds.toFixed(1),
      totalSeconds: +(countSeconds + buildSeconds).toFixed(1),
      cpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(1),
      peakRssMB: { chunksLoaded: Math.round(loadedPeak), counted: Math.round(countedPeak), end: Math.round(peakRss()) },
      stats: built.stats,
    }),
  );
}

async function main(): Promise<void> {
  const n = Number(process.env.HEARTH_BENCH_CHUNKS ?? 100_000);
  const weight = Number(process.env.HEARTH_BENCH_WEIGHT ?? 1);
  if (process.argv[2] === '--child') return child(process.argv[3], n, weight);
  for (const source of (process.env.HEARTH_BENCH_SOURCES ?? 'fixed,repeat,shuffled').split(',')) {
    console.log(`uptime before: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
    const run = spawnSync('npx', ['tsx', path.join(ROOT, 'bench', 'adaptive-embedder.ts'), '--child', source], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    console.log(run.stdout.trim());
    console.log(`uptime after: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  }
}

// Run, not imported (bench/corpus-adaptation.ts borrows chunksOf).
if (process.argv[1] && path.resolve(process.argv[1]) === path.join(ROOT, 'bench', 'adaptive-embedder.ts')) await main();
