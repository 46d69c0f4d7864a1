import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The kinds of model Hearth installs under MODEL_DIR, each in a folder of its own. */
export type ModelKind = 'embedding' | 'llm' | 'reranker';

/** Folder under MODEL_DIR, and the words errors use, per kind. */
export const MODEL_KINDS: Readonly<Record<ModelKind, { folder: string; label: string }>> = Object.freeze({
  embedding: { folder: 'embeddings', label: 'embedding model' },
  llm: { folder: 'llm', label: 'chat model' },
  reranker: { folder: 'rerankers', label: 'reranker' },
});

/** What every manifest.json says, whatever the kind. */
interface ManifestBase {
  id: string;
  name: string;
  /** sha256 (hex) of every file the model needs, checked at load so a tampered or truncated model is refused. */
  sha256: Record<string, string>;
  /** Where it came from: 'import:/path', 'pull:<url>', 'built:<builder>'. */
  source: string;
  licence: string;
  installed_at: string;
}

export const EMBEDDING_FORMATS = ['onnx', 'model2vec'] as const;
export type EmbeddingFormat = (typeof EMBEDDING_FORMATS)[number];
/** Model2Vec's own default token limit (StaticModel.encode max_length): a Model2Vec model's unless its manifest says another. */
export const MODEL2VEC_MAX_TOKENS = 512;

/** manifest.json of an installed embedding model, in `${MODEL_DIR}/embeddings/<id>/`. */
export interface EmbeddingManifest extends ManifestBase {
  kind: 'embedding';
  /** 'onnx' (the default when absent): a sentence-transformers ONNX export; 'model2vec': a static token table (model.safetensors). */
  format?: EmbeddingFormat;
  /** File names relative to the model folder. */
  files: { model: string; tokenizer: string; tokenizer_config?: string };
  dimension: number;
  max_tokens: number;
  pooling: 'mean';
  normalize: true;
  /** How a built model was made (the default embedder records its method here). */
  method?: string;
}

/** manifest.json of an installed chat model, in `${MODEL_DIR}/llm/<id>/` next to model.gguf. */
export interface LlmManifest extends ManifestBase {
  kind: 'llm';
  files: { model: string };
  bytes: number;
}

/** manifest.json of an installed cross-encoder reranker, in `${MODEL_DIR}/rerankers/<id>/`. */
export interface RerankerManifest extends ManifestBase {
  kind: 'reranker';
  files: { model: string; tokenizer: string; tokenizer_config?: string };
  /** Longest query + passage pair in tokens; longer passages are cut. */
  max_tokens: number;
}

export type ModelManifest<K extends ModelKind = ModelKind> = Extract<EmbeddingManifest | LlmManifest | RerankerManifest, { kind: K }>;

const MANIFEST_FILE = 'manifest.json';
/** Model ids become folder names: keep them to a safe alphabet. */
const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function assertModelId(id: string): void {
  if (!MODEL_ID_PATTERN.test(id)) throw new Error(`invalid model id "${id}" (letters, digits, . _ - only)`);
}

function validateEmbedding(m: Partial<EmbeddingManifest>, bad: (why: string) => never): EmbeddingManifest {
  if (typeof m.id !== 'string' || !MODEL_ID_PATTERN.test(m.id)) bad('missing or invalid id');
  if (m.kind !== 'embedding') bad(`kind must be "embedding"`);
  if (!m.files || typeof m.files.model !== 'string' || typeof m.files.tokenizer !== 'string') bad('files.model and files.tokenizer are required');
  for (const name of Object.values(m.files!)) {
    if (typeof name !== 'string' || name.includes('..') || path.isAbsolute(name)) bad(`file "${String(name)}" must be a relative path inside the model folder`);
    if (!m.sha256 || !/^[0-9a-f]{64}$/.test(m.sha256[name] ?? '')) bad(`no sha256 for ${name}`);
  }
  if (!Number.isInteger(m.dimension) || m.dimension! <= 0) bad('dimension must be a positive integer');
  if (!Number.isInteger(m.max_tokens) || m.max_tokens! < 2) bad('max_tokens must be an integer ≥ 2');
  if (m.pooling !== 'mean') bad('only pooling "mean" is supported');
  if (m.format !== undefined && !EMBEDDING_FORMATS.includes(m.format)) bad(`format must be one of ${EMBEDDING_FORMATS.join(', ')}`);
  return m as EmbeddingManifest;
}

function validateLlm(m: Partial<LlmManifest>, bad: (why: string) => never): LlmManifest {
  const name = m.files?.model;
  if (m.kind !== 'llm' || typeof m.id !== 'string' || !MODEL_ID_PATTERN.test(m.id)) bad('not a chat model manifest');
  if (typeof name !== 'string' || name.includes('..') || path.isAbsolute(name)) bad('files.model must be a relative path');
  if (!/^[0-9a-f]{64}$/.test(m.sha256?.[name!] ?? '')) bad(`no sha256 for ${name}`);
  return m as LlmManifest;
}

function validateReranker(m: Partial<RerankerManifest>, bad: (why: string) => never): RerankerManifest {
  if (m.kind !== 'reranker' || typeof m.id !== 'string' || !MODEL_ID_PATTERN.test(m.id)) bad('not a reranker manifest');
  if (!m.files || typeof m.files.model !== 'string' || typeof m.files.tokenizer !== 'string') bad('files.model and files.tokenizer are required');
  for (const name of Object.values(m.files!)) {
    if (typeof name !== 'string' || name.includes('..') || path.isAbsolute(name)) bad(`file "${String(name)}" must be a relative path inside the model folder`);
    if (!/^[0-9a-f]{64}$/.test(m.sha256?.[name] ?? '')) bad(`no sha256 for ${name}`);
  }
  if (!Number.isInteger(m.max_tokens) || m.max_tokens! < 8) bad('max_tokens must be an integer ≥ 8');
  return m as RerankerManifest;
}

const VALIDATORS: Record<ModelKind, (m: never, bad: (why: string) => never) => ModelManifest> = {
  embedding: validateEmbedding,
  llm: validateLlm,
  reranker: validateReranker,
};

/** Checks a parsed manifest.json of the given kind; `where` names it in the error. */
function validateManifest<K extends ModelKind>(value: unknown, kind: K, where: string): ModelManifest<K> {
  const bad = (why: string): never => {
    throw new Error(`${MODEL_KINDS[kind].label} manifest ${where}: ${why}`);
  };
  if (!value || typeof value !== 'object') return bad('not a JSON object');
  return VALIDATORS[kind](value as never, bad) as ModelManifest<K>;
}

export async function readManifest<K extends ModelKind>(folder: string, kind: K): Promise<ModelManifest<K>> {
  const file = path.join(folder, MANIFEST_FILE);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`${MODEL_KINDS[kind].label} manifest ${file}: ${(err as Error).message}`);
  }
  return validateManifest(json, kind, file);
}

/** Written to a temp file then renamed, so a crash never leaves a half manifest. */
export async function writeManifest(folder: string, manifest: ModelManifest): Promise<void> {
  await mkdir(folder, { recursive: true });
  const tmp = path.join(folder, `${MANIFEST_FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n');
  await rename(tmp, path.join(folder, MANIFEST_FILE));
}
