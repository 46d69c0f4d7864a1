import { Type, type Static, type TSchema } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const ChatModelView = Type.Object({
  backend: StringEnum(['local', 'hosted', 'inference-server'] as const, { description: 'hosted: LLM_BACKEND=hosted; inference-server: INFERENCE_URL; local: a GGUF in MODEL_DIR/llm' }),
  model: Type.String(),
  file: Nullable(Type.String({ description: 'The GGUF (<id>/model.gguf under MODEL_DIR/llm); null for remote backends' })),
  parameters: Nullable(Type.Integer({ description: 'Weights counted from the GGUF tensors' })),
  quantisation: Nullable(Type.String({ description: 'e.g. Q8_0, F32' })),
  context: Type.Object({
    requested: Type.Integer({ description: 'N_CTX' }),
    effective: Type.Integer({ description: 'EFFECTIVE_N_CTX: N_CTX capped by the trained context and free memory (remote: N_CTX as stated)' }),
    trained: Nullable(Type.Integer()),
  }),
  threads: Nullable(Type.Integer({ description: 'N_THREADS capped at the cores present' })),
  gpu_layers: Nullable(Type.Integer({ description: 'Layers actually offloaded (0 without a CUDA GPU)' })),
  device: StringEnum(['cpu', 'cuda', 'remote'] as const),
});

const EmbeddingModelView = Type.Object({
  model_id: Type.String(),
  dimension: Type.Integer(),
  device: Type.String(),
  max_tokens: Type.Integer(),
});

export const ModelInfoView = Type.Object({
  chat: Nullable(ChatModelView),
  embedding: Nullable(EmbeddingModelView),
  default_embedder: Type.Optional(Type.Object({
    state: StringEnum(['off', 'not_needed', 'building', 'installed', 'failed'] as const, { description: "The embedder a box gets when MODEL_DIR has none (HEARTH_DEFAULT_EMBEDDER): the one shipped with Hearth, installed at first start, or Hearth's WordNet build (building until done); installed when one of them is in use, not_needed when another model is, failed (detail says why) when it could not be put in force" }),
    detail: Type.String(),
  })),
  mode: Type.Object({
    search: StringEnum(['hybrid', 'keyword'] as const),
    answers: StringEnum(['generative', 'extractive'] as const),
  }),
});
export type ModelInfoView = Static<typeof ModelInfoView>;
