/**
 * A second evaluation corpus, plain text (issue 16): the manual pages installed on this machine, rendered to text as
 * `man` shows them, one document per page. Sections 1, 5, 7 and 8; compressed page 2 KB or more; the `gcloud-*`
 * pages left out (1,500 near-copies of one command's help); rendered text 1 KB to 300 KB, deduplicated by content
 * (sha256), keeping the smallest id. A document's id is `man<section>/<page file without .gz>.txt`
 * (`man1/tar.1.txt`). Rendered at 80 columns, without hyphenation or justification (a word is never cut at a line's end).
 * Alone: `npx tsx scripts/eval/man-corpus.ts DEST [MAN_ROOT]` writes DEST/<id> and prints the count.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { MAX_BYTES, MIN_BYTES, byId } from './corpus.js';

const run = promisify(execFile);
const SECTIONS = ['man1', 'man5', 'man7', 'man8'];
const MIN_COMPRESSED = 2048;
const EXCLUDED = /^gcloud[-_.]/;

/** One page as text: `man -l` renders the file, `col -bx` drops the overstrike (bold, underline) and tabs. */
async function render(file: string): Promise<string> {
  const env = { ...process.env, MANWIDTH: '80', MAN_KEEP_FORMATTING: '', LANG: 'C.UTF-8' };
  const { stdout } = await run('sh', ['-c', 'man --no-hyphenation --no-justification -P cat -l "$1" 2>/dev/null | col -bx', 'render', file], { env, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

export async function buildManCorpus(dest: string, manRoot = '/usr/share/man'): Promise<string[]> {
  const pages: Array<{ id: string; file: string }> = [];
  for (const section of SECTIONS) {
    for (const entry of await readdir(path.join(manRoot, section), { withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.gz') || EXCLUDED.test(entry.name)) continue;
      const file = path.join(manRoot, section, entry.name);
      if ((await stat(file)).size < MIN_COMPRESSED) continue;
      pages.push({ id: `${section}/${entry.name.slice(0, -3)}.txt`, file });
    }
  }
  pages.sort(byId);
  const kept = new Map<string, string>();
  const texts = new Map<string, string>();
  let next = 0;
  const worker = async () => {
    while (next < pages.length) {
      const page = pages[next++];
      const text = await render(page.file);
      const bytes = Buffer.byteLength(text);
      if (bytes < MIN_BYTES || bytes > MAX_BYTES) continue;
      texts.set(page.id, text);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, cpus().length) }, worker));
  for (const id of [...texts.keys()].sort()) {
    const hash = createHash('sha256').update(texts.get(id)!).digest('hex');
    if (!kept.has(hash)) kept.set(hash, id);
  }
  const ids = [...kept.values()].sort();
  for (const id of ids) {
    await mkdir(path.dirname(path.join(dest, id)), { recursive: true });
    await writeFile(path.join(dest, id), texts.get(id)!);
  }
  return ids;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [dest, manRoot] = process.argv.slice(2);
  if (!dest) throw new Error('usage: tsx scripts/eval/man-corpus.ts DEST [MAN_ROOT]');
  const ids = await buildManCorpus(path.resolve(dest), manRoot);
  console.log(`${ids.length} pages written into ${path.resolve(dest)}`);
}
