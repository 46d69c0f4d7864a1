import path from 'node:path';
import { parseArgs } from 'node:util';
import { tightenFolder } from '../../core/owner-only.js';
import { importModelFolder, installShippedEmbedder, pullModel } from '../../native/embeddings/index.js';
import { importLlm, pullLlm } from '../../native/llm/index.js';
import { importReranker } from '../../native/reranker/index.js';
import {
  DEFAULT_EMBEDDING_PRESET,
  DEFAULT_HUB_URL,
  EMBEDDING_PRESETS,
  LLM_PRESETS,
  listInstalledModels,
  modelFolder,
  readActiveModelId,
  readManifest,
  resolveActiveModel,
  setActiveModel,
  type EmbeddingManifest,
  type LlmManifest,
} from '../../native/model-files/index.js';
import { DEFAULT_EMBEDDER_DIMENSION, installDefaultModel } from '../../plugins/search-index/index.js';
import { UsageError, type Command } from './exit-codes.js';

export const MODELS_USAGE = `hearth models: embedding models under MODEL_DIR/embeddings, chat models under MODEL_DIR/llm; nothing downloads unless you run pull

  hearth models import DIR [--id ID] [--name NAME] [--licence TEXT] [--max-tokens N] [--file onnx/NAME.onnx] [--no-activate]
      Copies an exported sentence-transformers ONNX folder (model.onnx or onnx/model*.onnx, tokenizer.json,
      optional tokenizer_config.json and config.json), or a Model2Vec folder (model.safetensors, tokenizer.json,
      config.json), records sha256, probes the dimension, makes it active.
  hearth models pull [--model ${[...Object.keys(EMBEDDING_PRESETS), ...Object.keys(LLM_PRESETS)].join('|')}] [--no-activate]
      Downloads a recommended model by pinned revision and sha256 (default ${DEFAULT_EMBEDDING_PRESET}); the chat
      model ${Object.keys(LLM_PRESETS).join(', ')} goes to MODEL_DIR/llm.
      HEARTH_MODEL_HUB_URL points at a mirror (default ${DEFAULT_HUB_URL}).
  hearth models install-default [--no-activate]
      Installs the embedder shipped with Hearth (potion-base-4M-int8: MinishLab's pretrained Model2Vec model, MIT,
      128 dimensions, 4.5 MB), checked against its pinned sha256, as the active model. What the service installs
      by itself at first start when no model is there (HEARTH_DEFAULT_EMBEDDER=shipped); here for a box that has
      another model and wants it back.
  hearth models build-default [--dimension N] [--no-activate]
      Builds Hearth's own offline embedder (hearth-wordnet-static: WordNet 3.1 PPMI + SVD static token
      vectors on the all-MiniLM-L6-v2 WordPiece vocabulary, ${DEFAULT_EMBEDDER_DIMENSION} dimensions) deterministically,
      with no network, and installs it (sha256, manifest) as the active model. Under a minute on 2 cores.
  hearth models list
      Installed embedding models and rerankers; * marks the active ones.
  hearth models use ID
      Makes an installed model the active one.
  hearth models import-llm FILE.gguf [--id ID] [--name NAME] [--licence TEXT] [--no-activate]
      Copies a GGUF chat model into MODEL_DIR/llm/<id> (id: the file name), records its sha256, makes it active.
  hearth models use-llm ID
      Makes an installed chat model the active one.
  hearth models import-reranker DIR [--id ID] [--name NAME] [--licence TEXT] [--max-tokens N] [--file onnx/NAME.onnx] [--no-activate]
      Copies a cross-encoder ONNX export (e.g. cross-encoder/ms-marco-MiniLM-L-6-v2: model.onnx or onnx/model.onnx,
      tokenizer.json, optional tokenizer_config.json) into MODEL_DIR/rerankers/<id>, records sha256, runs a probe
      pair, makes it active. The service loads it at start and reranks the top RERANK_TOP_N fused candidates.
  hearth models use-reranker ID
      Makes an installed reranker the active one (restart the service to load it).

MODEL_DIR defaults to DATA_DIR/models (DATA_DIR defaults to ./data), as for the service. Run it as the service's
user: what it installs is owner-only. \`npm run models -- ARGS\` is the same command from a source checkout.
Exit codes: 0 done, 1 failed, 2 usage.
`;



/** Same default as core/config.ts, without requiring the service's secrets to be set. */
function modelDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './data');
  return path.resolve(env.MODEL_DIR?.trim() || path.join(dataDir, 'models'));
}

function describe(m: EmbeddingManifest): string {
  return `${m.id}  ${m.dimension}d  max ${m.max_tokens} tokens  ${m.name}  [${m.licence}]  ${m.source}  ${m.installed_at}`;
}

function describeLlm(m: LlmManifest): string {
  return `${m.id}  ${m.bytes} bytes  ${m.name}  [${m.licence}]  ${m.source}  ${m.installed_at}`;
}

function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 2) throw new UsageError(`--${name} must be an integer ≥ 2, got "${value}"`);
  return Number(value);
}

/** The CLI; resolves to the exit code so that tests can drive it without a process. */
export async function main(argv: string[], out = (line: string) => console.log(line), err = (line: string) => console.error(line), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        id: { type: 'string' },
        name: { type: 'string' },
        licence: { type: 'string' },
        'max-tokens': { type: 'string' },
        file: { type: 'string' },
        model: { type: 'string' },
        'no-activate': { type: 'boolean' },
        dimension: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    const [command, arg] = positionals;
    if (values.help || !command) {
      out(MODELS_USAGE);
      return command || values.help ? 0 : 2;
    }
    const modelDir = modelDirFromEnv(env);
    const activate = !values['no-activate'];
    switch (command) {
      case 'import': {
        if (!arg) throw new UsageError('import needs a folder');
        const m = await importModelFolder(arg, {
          modelDir,
          id: values.id,
          name: values.name,
          licence: values.licence,
          maxTokens: positiveInteger('max-tokens', values['max-tokens']),
          modelFile: values.file,
          activate,
        });
        out(`imported ${describe(m)}${activate ? ' (active)' : ''}`);
        return 0;
      }
      case 'pull': {
        const name = values.model ?? DEFAULT_EMBEDDING_PRESET;
        const preset = EMBEDDING_PRESETS[name];
        if (LLM_PRESETS[name]) {
          const m = await pullLlm({ modelDir, preset: LLM_PRESETS[name], hubUrl: env.HEARTH_MODEL_HUB_URL?.trim() || undefined, activate, log: err });
          out(`pulled chat model ${describeLlm(m)}${activate ? ' (active)' : ''}`);
          return 0;
        }
        if (!preset) throw new UsageError(`unknown model "${name}"; choose one of ${[...Object.keys(EMBEDDING_PRESETS), ...Object.keys(LLM_PRESETS)].join(', ')}`);
        const m = await pullModel({ modelDir, preset, hubUrl: env.HEARTH_MODEL_HUB_URL?.trim() || undefined, activate, log: err });
        out(`pulled ${describe(m)}${activate ? ' (active)' : ''}`);
        return 0;
      }
      case 'install-default': {
        const m = await installShippedEmbedder({ modelDir, activate });
        out(`installed ${describe(m)}${activate ? ' (active)' : ''}`);
        return 0;
      }
      case 'build-default': {
        const m = await installDefaultModel({ modelDir, dimension: positiveInteger('dimension', values.dimension), activate, progress: (line) => err(`build-default: ${line}`) });
        out(`built ${describe(m)}${activate ? ' (active)' : ''}`);
        out(`sha256 ${m.sha256[m.files.model]}  ${m.files.model}`);
        return 0;
      }
      case 'list': {
        const { models, problems } = await listInstalledModels(modelDir, 'embedding');
        const active = await resolveActiveModel(modelDir, 'embedding').then((m) => m?.id, () => readActiveModelId(modelDir, 'embedding'));
        if (!models.length) out(`no embedding model installed in ${modelDir} (search runs on keywords only)`);
        for (const m of models) out(`${m.id === active ? '*' : ' '} ${describe(m.manifest)}`);
        for (const p of problems) err(`broken: ${p.folder}: ${p.error}`);
        const rerankers = await listInstalledModels(modelDir, 'reranker');
        const activeReranker = await readActiveModelId(modelDir, 'reranker');
        for (const m of rerankers.models) out(`${m.id === activeReranker ? '*' : ' '} reranker ${m.id}  max ${m.manifest.max_tokens} tokens  ${m.manifest.name}  [${m.manifest.licence}]  ${m.manifest.source}`);
        for (const p of rerankers.problems) err(`broken: ${p.folder}: ${p.error}`);
        return 0;
      }
      case 'use': {
        if (!arg) throw new UsageError('use needs a model id');
        await readManifest(modelFolder(modelDir, 'embedding', arg), 'embedding').catch((e: Error) => {
          throw new Error(`"${arg}" is not an installed model: ${e.message}`);
        });
        await setActiveModel(modelDir, 'embedding', arg);
        out(`active embedding model: ${arg}`);
        return 0;
      }
      case 'import-llm': {
        if (!arg) throw new UsageError('import-llm needs a .gguf file');
        const m = await importLlm(arg, { modelDir, id: values.id, name: values.name, licence: values.licence, activate });
        out(`imported chat model ${describeLlm(m)}${activate ? ' (active)' : ''}`);
        return 0;
      }
      case 'import-reranker': {
        if (!arg) throw new UsageError('import-reranker needs a folder');
        const m = await importReranker(arg, { modelDir, id: values.id, name: values.name, licence: values.licence, maxTokens: positiveInteger('max-tokens', values['max-tokens']), modelFile: values.file, activate });
        out(`imported reranker ${m.id}  max ${m.max_tokens} tokens  ${m.name}  [${m.licence}]  ${m.source}${activate ? ' (active)' : ''}`);
        return 0;
      }
      case 'use-reranker': {
        if (!arg) throw new UsageError('use-reranker needs a model id');
        await readManifest(modelFolder(modelDir, 'reranker', arg), 'reranker').catch((e: Error) => {
          throw new Error(`"${arg}" is not an installed reranker: ${e.message}`);
        });
        await setActiveModel(modelDir, 'reranker', arg);
        out(`active reranker: ${arg}`);
        return 0;
      }
      case 'use-llm': {
        if (!arg) throw new UsageError('use-llm needs a model id');
        await setActiveModel(modelDir, 'llm', arg);
        out(`active chat model: ${arg}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    err(`models: ${(error as Error).message}`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(MODELS_USAGE);
      return 2;
    }
    return 1;
  }
}

/** The `hearth models` command: MODEL_DIR owner-only first, like everything the service writes there. */
export const models: Command = async (io) => {
  try {
    const notice = tightenFolder(modelDirFromEnv(io.env), 'MODEL_DIR');
    if (notice) io.err(`models: ${notice}`);
  } catch (error) {
    io.err(`models: warning: MODEL_DIR ${(error as Error).message}`);
  }
  return main(io.argv, io.out, io.err, io.env);
};
