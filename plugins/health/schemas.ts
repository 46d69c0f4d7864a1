import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

/** unreachable: a remote component (the inference server, a hosted model) does not answer. */
const COMPONENT_STATUSES = ['ok', 'not_installed', 'unreachable', 'error'] as const;

export const ComponentReport = Type.Object({
  status: StringEnum(COMPONENT_STATUSES),
  latency_ms: Type.Number({ description: 'How long the probe took' }),
  detail: Type.Optional(Type.String({ description: 'One line for humans; never a path or a secret (this route is public)' })),
});
export type ComponentReport = Static<typeof ComponentReport>;

export const HealthReport = Type.Object({
  status: StringEnum(['ok', 'degraded', 'error'] as const, {
    description: 'error (HTTP 503) when the database fails; degraded when another component is not ok; else ok',
  }),
  version: Type.String(),
  uptime_seconds: Type.Integer(),
  components: Type.Object(
    { database: ComponentReport, vector_index: ComponentReport, embedder: ComponentReport, chat_model: ComponentReport },
    { additionalProperties: ComponentReport },
  ),
  capabilities: Type.Object({
    search: StringEnum(['hybrid', 'keyword'] as const),
    answers: StringEnum(['generative', 'extractive', 'unavailable'] as const, {
      description: 'generative: a working chat model; extractive: none installed (passages are quoted); unavailable: one is configured but failing (chat answers 502/504)',
    }),
  }),
});
export type HealthReport = Static<typeof HealthReport>;
