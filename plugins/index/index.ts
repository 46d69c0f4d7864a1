import fp from 'fastify-plugin';
import { embedderModelId, loadEmbedder, resolveActiveModel, setActiveModel } from '../../native/embeddings/index.js';
import { DEFAULT_EMBEDDER_ID, installDefaultModelInBackground, type BackgroundBuild } from '../../native/embeddings/default-model/index.js';
import { ChunksRepository } from './chunks-repository.js';
import { KeywordIndexMaintenance } from './keyword-maintenance.js';
import { indexRoutes } from './routes.js';
import { SearchIndex } from './search-index.js';
import { IndexService } from './service.js';
import { IndexStore } from './store.js';

// The index's public surface: what other plugins may import.
export type { NewChunk } from './chunks-repository.js';
export type { SearchIndex } from './search-index.js';
export type { IndexService, IndexStats } from './service.js';
export type { IndexStore } from './store.js';

declare module 'fastify' {
  interface FastifyInstance {
    index: IndexService;
    defaultEmbedder: DefaultEmbedderStatus;
    keywordIndex: KeywordIndexMaintenance;
  }
}

/** How often the keyword index is checked for writes to merge. */
const MERGE_CHECK_MS = 30_000;

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
 * The search index: chunks, their keyword rows and vectors (written through app.index.store), the
 * embedding model from MODEL_DIR, all kept consistent with SQLite. With no model installed the
 * service still starts and searches by keywords.
 */
export default fp(
  async function index(app) {
    const searchIndex = new SearchIndex();
    const chunks = new ChunksRepository(app.db);
    const store = new IndexStore(chunks, searchIndex, app.log);
    const service = new IndexService(searchIndex, store, chunks, app.jobs, app.config.databaseFile, app.config.dataDir, app.log);
    app.decorate('searchIndex', searchIndex);
    app.decorate('index', service);
    const maintenance = new KeywordIndexMaintenance(chunks);
    app.decorate('keywordIndex', maintenance);
    const timer = setInterval(() => maintenance.compact().catch((err) => app.log.warn({ err }, 'merging the keyword index failed')), MERGE_CHECK_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await maintenance.stop();
    });

    let problem: string | null = null;
    /** The model a background rebuild is heading to, and the last active model that failed to load. */
    let towards: string | null = null;
    let refused: string | null = null;
    // off, building and failed are states of their own; otherwise the model in force says installed or not_needed.
    let phase: { state: 'off' | 'building' | 'failed'; detail: string } | null = app.config.defaultEmbedder === 'off' ? { state: 'off', detail: '' } : null;
    const isDefault = (modelId: string | undefined) => !!modelId?.startsWith(`${DEFAULT_EMBEDDER_ID}@`);
    const defaultEmbedder: DefaultEmbedderStatus = {
      get state() {
        return phase?.state ?? (isDefault(searchIndex.embedder()?.modelId) ? 'installed' : 'not_needed');
      },
      get detail() {
        const modelId = searchIndex.embedder()?.modelId;
        return phase?.detail ?? (isDefault(modelId) ? `${modelId}: Hearth's built-in embedder` : '');
      },
    };
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
        if (searchIndex.embedder()?.modelId !== embedder.modelId) towards = embedder.modelId;
      } else if (app.config.defaultEmbedder === 'build') {
        buildPending = true;
        phase = { state: 'building', detail: 'queued: starts once the service is ready' };
        app.log.info('no embedding model installed in MODEL_DIR: building Hearth\'s default embedder in the background (HEARTH_DEFAULT_EMBEDDER=off disables it); search runs on keywords meanwhile');
      } else app.log.warn('no embedding model installed in MODEL_DIR: search runs on keywords only (npm run models -- pull, or import)');
    } catch (error) {
      // A broken or tampered model must not keep the service down: keyword search still works.
      problem = error instanceof Error ? error.message : String(error);
      app.log.error({ err: error }, 'the embedding model could not be loaded: search runs on keywords only');
    }

    app.health.register('embedder', async () => {
      const embedder = searchIndex.embedder();
      if (embedder) return { status: 'ok', detail: `${embedder.modelId} (${embedder.dimension} dimensions, ${embedder.device})${isDefault(embedder.modelId) ? ', Hearth\'s built-in default embedder' : ''}` };
      if (defaultEmbedder.state === 'building') return { status: 'not_installed', detail: `building Hearth's default embedder in the background (${defaultEmbedder.detail}): search runs on keywords meanwhile` };
      if (defaultEmbedder.state === 'failed') return { status: 'error', detail: 'building the default embedder failed: search runs on keywords only' };
      return problem ? { status: 'error', detail: 'the embedding model could not be loaded: search runs on keywords only' } : { status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' };
    });
    app.health.register('vector_index', async () => {
      const vectors = searchIndex.vectors();
      return vectors ? { status: 'ok', detail: `${vectors.size()} vectors` } : { status: 'not_installed', detail: 'no vector index: search runs on keywords only' };
    });

    /**
     * Puts MODEL_DIR's active model in force without a restart: the first model is opened (chunks
     * embedded in the background); another model gets a background rebuild while the one in force
     * keeps answering. Runs one at a time; a model that fails to load is logged once, not every poll.
     */
    let syncing: Promise<void> = Promise.resolve();
    const syncActiveModel = () =>
      (syncing = syncing.then(async () => {
        if (closing) return;
        const active = await resolveActiveModel(app.config.modelDir);
        const wanted = active && embedderModelId(active.manifest);
        if (!wanted || wanted === (towards ?? searchIndex.embedder()?.modelId) || wanted === refused) return;
        let embedder;
        try {
          embedder = await loadEmbedder({ modelDir: app.config.modelDir, device: app.config.embedDevice, log: app.log, id: active.id });
        } catch (error) {
          refused = wanted;
          throw error;
        }
        if (!embedder) return;
        if (closing) return void (await embedder.close());
        problem = null;
        if (!searchIndex.embedder()) {
          await service.open(embedder, async () => null);
          app.log.info({ model: embedder.modelId }, 'embedding model in force: search is hybrid; embedding pending chunks in the background');
          await service.catchUp();
        } else {
          towards = embedder.modelId;
          app.log.warn({ from: searchIndex.embedder()!.modelId, to: embedder.modelId }, 'embedding model changed: rebuilding the vector index in the background; search uses the previous model meanwhile');
          await service.rebuild(embedder);
        }
      }));
    let watch: NodeJS.Timeout | undefined;

    let build: BackgroundBuild | null = null;
    let building: Promise<void> | null = null;
    let closing = false;
    const startDefaultBuild = () => {
      const started = Date.now();
      const modelDir = app.config.modelDir;
      build = installDefaultModelInBackground({ modelDir, dimension: app.config.defaultEmbedderDimension, activate: false }, (message) => {
        phase = { state: 'building', detail: message };
        app.log.info(`default embedder: ${message}`);
      });
      building = build.done
        .then(async (manifest) => {
          if (closing) return;
          // An admin may have installed another model meanwhile: it wins.
          if (!(await resolveActiveModel(modelDir))) await setActiveModel(modelDir, manifest.id);
          await syncActiveModel();
          const embedder = searchIndex.embedder();
          if (!embedder) throw new Error('the built model could not be put in force');
          phase = null;
          app.log.info({ model: embedder.modelId, seconds: Math.round((Date.now() - started) / 1000) }, 'default embedder installed and in force: search is hybrid; embedding pending chunks in the background');
        })
        .catch((error: Error) => {
          if (closing) return;
          phase = { state: 'failed', detail: error.message };
          app.log.error({ err: error }, 'building the default embedder failed: search runs on keywords only');
        });
    };

    app.addHook('onReady', async () => {
      await service.catchUp();
      if (buildPending) startDefaultBuild();
      if (app.config.modelWatchSeconds > 0) {
        let lastError = '';
        watch = setInterval(() => {
          // While the default embedder builds, its completion does this.
          if (defaultEmbedder.state === 'building') return;
          syncActiveModel().then(
            () => (lastError = ''),
            (error: Error) => {
              if (error.message !== lastError) app.log.error({ err: error }, 'the active embedding model in MODEL_DIR could not be put in force; the model in force stays');
              lastError = error.message;
            },
          );
        }, app.config.modelWatchSeconds * 1000);
        watch.unref();
      }
    });
    app.addHook('onClose', async () => {
      closing = true;
      clearInterval(watch);
      await syncing.catch(() => undefined);
      await (build as BackgroundBuild | null)?.cancel();
      await building;
    });
    app.addHook('onClose', async () => {
      await store.flush();
      await searchIndex.embedder()?.close();
    });
    await app.register(indexRoutes);
  },
  { name: 'index', dependencies: ['jobs', 'health'] },
);
