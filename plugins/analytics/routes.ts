import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { AnalyticsParams, ChunkSizeDistribution, ChunksPerDocument, EmptyMetadata, InheritanceRatio, MetadataCoverage, MetadataHitRate, RulePriorityAudit } from './schemas.js';
import type { AnalyticsService } from './service.js';

const access = { access: { role: 'viewer' as const, tier: 'PRO' as const } };
const SOURCE = '{source_id} is a connector id, an integration id or `uploads`; anything else, or a source allowed to none of the caller’s groups, is a 404. Computed in SQL at each call, ' +
  'over the documents the caller\'s groups may read.';

/** The seven endpoints: path, summary, response schema, and the service method that answers. */
const ENDPOINTS: Array<[string, string, TSchema, keyof AnalyticsService]> = [
  ['chunk-size-distribution', 'Histogram of chunk lengths (characters) with count, min, max, mean, median and p90', ChunkSizeDistribution, 'chunkSizeDistribution'],
  ['metadata-hit-rate', 'Per rule: documents and chunks its pattern matched, out of the totals', MetadataHitRate, 'metadataHitRate'],
  ['metadata-coverage', 'Per field: chunks and documents with a value', MetadataCoverage, 'metadataCoverage'],
  ['chunks-per-document', 'Histogram of chunks per document with summary statistics', ChunksPerDocument, 'chunksPerDocument'],
  ['inheritance-ratio', 'Per chunk-level field: self-matched, inherited, document-level and empty chunks', InheritanceRatio, 'inheritanceRatio'],
  ['empty-metadata', 'Chunks without any metadata value, and sample document ids', EmptyMetadata, 'emptyMetadata'],
  ['rule-priority-audit', 'Per field: how often each rule won where several matched', RulePriorityAudit, 'rulePriorityAudit'],
];

export const analyticsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const [path, summary, response, method] of ENDPOINTS) {
    app.get(`/api/analytics/:source_id/${path}`, {
      config: access,
      schema: { summary, description: SOURCE, tags: ['analytics'], params: AnalyticsParams, response: { 200: response } },
    }, async (request) => {
      const groups = await app.groups.callerGroups(request);
      return (app.analytics[method] as (sourceId: string, readerGroups: string[]) => Promise<unknown>).call(app.analytics, request.params.source_id, groups);
    });
  }
};
