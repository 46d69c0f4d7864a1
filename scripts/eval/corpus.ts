/**
 * The evaluation corpus of issue 16: every `*.md` under node_modules (no symlink followed, node_modules/@hearth
 * skipped), 1 KB to 300 KB, whose path does not look like a changelog, licence, contributing guide, security
 * policy or test fixture; deduplicated by content (sha256), keeping the lexicographically smallest path.
 * A document's id is its path relative to node_modules (`fastify/docs/Reference/Routes.md`).
 * Alone: `npx tsx scripts/eval/corpus.ts DEST [NODE_MODULES]` copies it into DEST/<id> and prints the count.
 */
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const MIN_BYTES = 1024;
export const MAX_BYTES = 300 * 1024;
/** Matched (case-insensitive) against `/` + the document id. */
export const EXCLUDED_PATH = /changelog|history|license|licence|code_of_conduct|contributing|security|\/test\/|\/tests\/|\/fixtures?\/|\/\.github\//i;

export interface CorpusDocument {
  /** Path relative to node_modules, `/`-separated. */
  id: string;
  file: string;
}

/** Every `*.md` regular file under root, symlinks neither followed nor listed. */
async function* markdownFiles(root: string, relative = ''): AsyncGenerator<string> {
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true })) {
    const id = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (id !== '@hearth') yield* markdownFiles(root, id);
    } else if (entry.isFile() && entry.name.endsWith('.md')) yield id;
  }
}

/** The corpus, sorted by id (code-unit order, as Python's sorted() for these ASCII paths). */
export async function listCorpus(nodeModules: string): Promise<CorpusDocument[]> {
  const root = await realpath(nodeModules);
  const smallestByHash = new Map<string, string>();
  for await (const id of markdownFiles(root)) {
    const file = path.join(root, id);
    const { size } = await stat(file);
    if (size < MIN_BYTES || size > MAX_BYTES || EXCLUDED_PATH.test(`/${id}`)) continue;
    const hash = createHash('sha256').update(await readFile(file)).digest('hex');
    const kept = smallestByHash.get(hash);
    if (kept === undefined || id < kept) smallestByHash.set(hash, id);
  }
  return [...smallestByHash.values()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((id) => ({ id, file: path.join(root, id) }));
}

/** Code-unit order of ids, the order every corpus listing keeps. */
export const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Every regular file under a prebuilt corpus folder (scripts/eval/man-corpus.ts writes one), sorted by id: no filter, no copy. */
export async function listFolder(root: string, relative = ''): Promise<CorpusDocument[]> {
  const found: CorpusDocument[] = [];
  for (const entry of await readdir(path.join(root, relative), { withFileTypes: true })) {
    const id = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...(await listFolder(root, id)));
    else if (entry.isFile()) found.push({ id, file: path.join(root, id) });
  }
  return relative ? found : found.sort(byId);
}

/** Copies the corpus into dest/<id> (the folder a connector scans); returns the documents. */
export async function buildCorpus(nodeModules: string, dest: string): Promise<CorpusDocument[]> {
  const documents = await listCorpus(nodeModules);
  for (const document of documents) {
    const target = path.join(dest, document.id);
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(document.file, target);
  }
  return documents;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [dest, nodeModules = path.resolve('node_modules')] = process.argv.slice(2);
  if (!dest) throw new Error('usage: tsx scripts/eval/corpus.ts DEST [NODE_MODULES]');
  const documents = await buildCorpus(nodeModules, path.resolve(dest));
  console.log(`${documents.length} documents copied into ${path.resolve(dest)}`);
}
