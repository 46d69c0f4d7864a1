import fp from 'fastify-plugin';
import { loadEmbedder, resolveActiveModel, setActiveModel } from '../../native/embeddings/index.js';
import { DEFAULT_EMBEDDER_ID, installDefaultModelInBackground, type BackgroundBuild } from '../../native/embeddings/default-model/index.js';
import { ChunksRepository } from '../ingestion/chunks-repository.js';
import { indexRoutes } from './routes.js';
import { SearchIndex } from './search-index.js';
import { IndexService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    index: IndexService;
    defaultEmbedder: DefaultEmbedderStatus;
  }
}

/**
 * Hearth's own offline embedder (HEARTH_DEFAULT_EMBEDDER=build): with no model installed it is built
 * in a worker thread after boot, keyword search serving meanwhile, then put in force.
 * off: disabled; not_needed: another model is installed; building; installed: in use; failed.
 */
export interface DefaultEmbedderStatus {
  state: 'off' | 'not_needed' | 'building' | 'installed' | 'failed';
  detail: string;
}

/**
 * The search index: the embedding model from MODEL_DIR and its vector index, kept consistent with
 * SQLite. With no model installed the service still starts and searches by keywords.
 */
export default fp(
  async function index(app) {
    const searchIndex = new SearchIndex();
    const service = new IndexService(searchIndex, new ChunksRepository(app.db), app.jobs, app.config.databaseFile, app.config.dataDir, app.log);
    app.decorate('searchIndex', searchIndex);
    app.decorate('index', service);

    let problem: string | null = null;
    const defaultEmbedder: DefaultEmbedderStatus = { state: app.config.defaultEmbedder === 'off' ? 'off' : 'not_needed', detail: '' };
    app.decorate('defaultEmbedder', defaultEmbedder);
    let buildPending = false;
    try {
      const load = (id?: string) => loadEmbedder({ modelDir: app.config.modelDir, device: app.config.embedDevice, log: app.log, ...(id ? { id } : {}) });
      const embedder = await load();
      // A previous model is reused only if its files are exactly those its vectors came from.
      const previous = async (modelId: string) => {
        const candidate = await load(modelId.split('@')[0]);
        if (candidate?.modelId === modelId) return candidate;
        await candidate?.close();
        return null;
      };
      if (embedder) {
        await service.open(embedder, previous);
        if (embedder.modelId.startsWith(`${DEFAULT_EMBEDDER_ID}@`)) Object.assign(defaultEmbedder, { state: 'installed', detail: `${embedder.modelId}: Hearth's built-in embedder` });
      } else if (app.config.defaultEmbedder === 'build') {
        buildPending = true;
        Object.assign(defaultEmbedder, { state: 'building', detail: 'queued: starts once the service is ready' });
        app.log.info('no embedding model installed in MODEL_DIR: building Hearth\'s default embedder in the background (HEARTH_DEFAULT_EMBEDDER=off disables it); search runs on keywords meanwhile');
      } else app.log.warn('no embedding model installed in MODEL_DIR: search runs on keywords only (npm run models -- pull, or import)');
    } catch (error) {
      // A broken or tampered model must not keep the service down: keyword search still works.
      problem = error instanceof Error ? error.message : String(error);
      app.log.error({ err: error }, 'the embedding model could not be loaded: search runs on keywords only');
    }

    app.health.register('embedder', async () => {
      const embedder = searchIndex.embedder();
      if (embedder) return { status: 'ok', detail: `${embedder.modelId} (${embedder.dimension} dimensions, ${embedder.device})${defaultEmbedder.state === 'installed' ? ', Hearth\'s built-in default embedder' : ''}` };
      if (defaultEmbedder.state === 'building') return { status: 'not_installed', detail: `building Hearth's default embedder in the background (${defaultEmbedder.detail}): search runs on keywords meanwhile` };
      if (defaultEmbedder.state === 'failed') return { status: 'error', detail: 'building the default embedder failed: search runs on keywords only' };
      return problem ? { status: 'error', detail: 'the embedding model could not be loaded: search runs on keywords only' } : { status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' };
    });
    app.health.register('vector_index', async () => {
      const vectors = searchIndex.vectors();
      return vectors ? { status: 'ok', detail: `${vectors.size()} vectors` } : { status: 'not_installed', detail: 'no vector index: search runs on keywords only' };
    });

    let build: BackgroundBuild | null = null;
    let building: Promise<void> | null = null;
    let closing = false;
    const startDefaultBuild = () => {
      const started = Date.now();
      const modelDir = app.config.modelDir;
      build = installDefaultModelInBackground({ modelDir, dimension: app.config.defaultEmbedderDimension, activate: false }, (message) => {
        defaultEmbedder.detail = message;
        app.log.info(`default embedder: ${message}`);
      });
      building = build.done
        .then(async (manifest) => {
          if (closing) return;
          // An admin may have installed another model meanwhile: it wins.
          if (!(await resolveActiveModel(modelDir))) await setActiveModel(modelDir, manifest.id);
          const embedder = await loadEmbedder({ modelDir, device: app.config.embedDevice, log: app.log });
          if (!embedder) throw new Error('the built model is not installed');
          if (closing) return void (await embedder.close());
          await service.open(embedder, async () => null);
          const own = embedder.modelId.startsWith(`${DEFAULT_EMBEDDER_ID}@`);
          Object.assign(defaultEmbedder, own ? { state: 'installed', detail: `${embedder.modelId}: Hearth's built-in embedder, built at first start` } : { state: 'not_needed', detail: '' });
          app.log.info({ model: embedder.modelId, seconds: Math.round((Date.now() - started) / 1000) }, 'default embedder installed and in force: search is hybrid; embedding pending chunks in the background');
          await service.catchUp();
        })
        .catch((error: Error) => {
          if (closing) return;
          Object.assign(defaultEmbedder, { state: 'failed', detail: error.message });
          app.log.error({ err: error }, 'building the default embedder failed: search runs on keywords only');
        });
    };

    app.addHook('onReady', async () => {
      await service.catchUp();
      if (buildPending) startDefaultBuild();
    });
    app.addHook('onClose', async () => {
      closing = true;
      await (build as BackgroundBuild | null)?.cancel();
      await building;
    });
    app.addHook('onClose', async () => {
      await searchIndex.vectors()?.save();
      await searchIndex.embedder()?.close();
    });
    await app.register(indexRoutes);
  },
  { name: 'index', dependencies: ['jobs', 'health'] },
);
