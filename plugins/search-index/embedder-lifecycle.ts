import type { FastifyBaseLogger } from 'fastify';
import { SHIPPED_EMBEDDER, embedderModelId, installShippedEmbedder, loadEmbedder, type EmbedDevice, type Embedder } from '../../native/embeddings/index.js';
import { resolveActiveModel, setActiveModel } from '../../native/model-files/index.js';
import { Serial } from '../../core/serial.js';
import { DEFAULT_EMBEDDER_ID, installDefaultModelInBackground, type BackgroundBuild } from './default-embedder/index.js';
import type { ActiveEmbedding } from './active-embedding.js';
import type { IndexAdmin } from './service.js';

/**
 * The embedder a box gets when MODEL_DIR has none (HEARTH_DEFAULT_EMBEDDER): the pretrained one shipped with
 * Hearth, installed at boot (shipped, the default), or Hearth's own WordNet table, built in a worker thread after
 * boot, keyword search serving meanwhile (build).
 * off: disabled; not_needed: another model is installed; building; installed: a default one is in use; failed.
 */
export interface DefaultEmbedderStatus {
  state: 'off' | 'not_needed' | 'building' | 'installed' | 'failed';
  detail: string;
}

/** What /api/health shows of a component. */
export interface ComponentHealth {
  status: 'ok' | 'not_installed' | 'error';
  detail: string;
}

export interface EmbedderLifecycleOptions {
  modelDir: string;
  device: EmbedDevice;
  /** HEARTH_DEFAULT_EMBEDDER. */
  defaultEmbedder: 'shipped' | 'build' | 'off';
  defaultEmbedderDimension: number;
  /** MODEL_WATCH_SECONDS: how often MODEL_DIR's active model is checked (0: never). */
  modelWatchSeconds: number;
  log: FastifyBaseLogger;
}

/** Which default a model id is: the shipped embedder, Hearth's WordNet build, or neither (null). */
function defaultKind(modelId: string | undefined): string | null {
  if (modelId?.startsWith(`${SHIPPED_EMBEDDER.id}@`)) return 'the embedder shipped with Hearth';
  if (modelId?.startsWith(`${DEFAULT_EMBEDDER_ID}@`)) return "Hearth's built-in default embedder";
  return null;
}

/**
 * Which embedding model is in force, and how it comes to be: loaded at boot (the previous model kept
 * answering while a changed one is rebuilt), the default embedder built when none is installed, and
 * MODEL_DIR watched so that a model installed while the service runs is put in force without a restart.
 * The vectors themselves are the IndexAdmin's: this class decides only which model they follow.
 */
export class EmbedderLifecycle {
  /** Why the active model could not be loaded at boot (null: it could, or none is installed). */
  private problem: string | null = null;
  /** The model a background rebuild is heading to, and the last active model that failed to load. */
  private towards: string | null = null;
  private refused: string | null = null;
  /** off, building and failed are states of their own; otherwise the model in force says installed or not_needed. */
  private phase: { state: 'off' | 'building' | 'failed'; detail: string } | null;
  private buildPending = false;
  /** What failed when phase is failed (its detail adds the reason). */
  private failedStep = '';
  /** Syncs run one at a time: a failed one does not fail every one after it. */
  private readonly syncs = new Serial();
  private watch: NodeJS.Timeout | undefined;
  private build: BackgroundBuild | null = null;
  private building: Promise<void> | null = null;
  private closing = false;

  constructor(
    private readonly activeEmbedding: ActiveEmbedding,
    private readonly admin: IndexAdmin,
    private readonly options: EmbedderLifecycleOptions,
  ) {
    this.phase = options.defaultEmbedder === 'off' ? { state: 'off', detail: '' } : null;
  }

  /** The default embedder's state, read live. */
  defaultEmbedder(): DefaultEmbedderStatus {
    const modelId = this.activeEmbedding.embedder()?.modelId;
    if (this.phase) return { ...this.phase };
    const kind = defaultKind(modelId);
    return kind ? { state: 'installed', detail: `${modelId}: ${kind}` } : { state: 'not_needed', detail: '' };
  }

  /**
   * At boot: loads MODEL_DIR's active model and opens its index, or plans the default embedder's
   * build. A broken or tampered model does not keep the service down: keyword search still works.
   */
  async load(): Promise<void> {
    const { log } = this.options;
    try {
      const { defaultEmbedder } = this.options;
      const embedder = (await this.loadModel()) ?? (defaultEmbedder === 'shipped' ? await this.installShipped() : null);
      if (embedder) {
        await this.admin.open(embedder, (modelId) => this.previous(modelId));
        if (this.activeEmbedding.embedder()?.modelId !== embedder.modelId) this.towards = embedder.modelId;
      } else if (defaultEmbedder === 'build') {
        this.buildPending = true;
        this.phase = { state: 'building', detail: 'queued: starts once the service is ready' };
        log.info('no embedding model installed in MODEL_DIR: building Hearth\'s default embedder in the background (HEARTH_DEFAULT_EMBEDDER=off disables it); search runs on keywords meanwhile');
      } else if (defaultEmbedder === 'off') log.warn('no embedding model installed in MODEL_DIR: search runs on keywords only (npm run models -- pull, or import)');
    } catch (error) {
      this.problem = error instanceof Error ? error.message : String(error);
      log.error({ err: error }, 'the embedding model could not be loaded: search runs on keywords only');
    }
  }

  /** Once the service is ready: the background catch-up, the default embedder's build, and the watch of MODEL_DIR. */
  async start(): Promise<void> {
    await this.admin.catchUp();
    if (this.buildPending) this.startDefaultBuild();
    if (this.options.modelWatchSeconds > 0) {
      let lastError = '';
      this.watch = setInterval(() => {
        // While the default embedder builds, its completion does this.
        if (this.defaultEmbedder().state === 'building') return;
        this.syncActiveModel().then(
          () => (lastError = ''),
          (error: Error) => {
            if (error.message !== lastError) this.options.log.error({ err: error }, 'the active embedding model in MODEL_DIR could not be put in force; the model in force stays');
            lastError = error.message;
          },
        );
      }, this.options.modelWatchSeconds * 1000);
      this.watch.unref();
    }
  }

  /**
   * Puts MODEL_DIR's active model in force without a restart: the first model is opened (chunks
   * embedded in the background); another model gets a background rebuild while the one in force
   * keeps answering. Runs one at a time; a model that fails to load is refused once, not every poll.
   */
  syncActiveModel(): Promise<void> {
    return this.syncs.run(() => this.putActiveInForce());
  }

  /** At shutdown: no more watching, syncing or building. */
  async stop(): Promise<void> {
    this.closing = true;
    clearInterval(this.watch);
    await this.syncs.settled();
    await this.build?.cancel();
    await this.building;
  }

  embedderHealth(): ComponentHealth {
    const embedder = this.activeEmbedding.embedder();
    const status = this.defaultEmbedder();
    if (embedder) {
      const kind = defaultKind(embedder.modelId);
      return { status: 'ok', detail: `${embedder.modelId} (${embedder.dimension} dimensions, ${embedder.device})${kind ? `, ${kind}` : ''}` };
    }
    if (status.state === 'building') return { status: 'not_installed', detail: `building Hearth's default embedder in the background (${status.detail}): search runs on keywords meanwhile` };
    // The reason (a path, a checksum) is for /api/model-info's signed-in readers, not for the open health check.
    if (status.state === 'failed') return { status: 'error', detail: `${this.failedStep}: search runs on keywords only` };
    return this.problem ? { status: 'error', detail: 'the embedding model could not be loaded: search runs on keywords only' } : { status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' };
  }

  vectorIndexHealth(): ComponentHealth {
    const vectors = this.activeEmbedding.vectors();
    return vectors ? { status: 'ok', detail: `${vectors.size()} vectors` } : { status: 'not_installed', detail: 'no vector index: search runs on keywords only' };
  }

  private loadModel(id?: string): Promise<Embedder | null> {
    const { modelDir, device, log } = this.options;
    return loadEmbedder({ modelDir, device, log, ...(id ? { id } : {}) });
  }

  /** A previous model is reused only if its files are exactly those its vectors came from. */
  private async previous(modelId: string): Promise<Embedder | null> {
    const candidate = await this.loadModel(modelId.split('@')[0]);
    if (candidate?.modelId === modelId) return candidate;
    await candidate?.close();
    return null;
  }

  private async putActiveInForce(): Promise<void> {
    if (this.closing) return;
    const { log } = this.options;
    const active = await resolveActiveModel(this.options.modelDir, 'embedding');
    const wanted = active && embedderModelId(active.manifest);
    if (!wanted || wanted === (this.towards ?? this.activeEmbedding.embedder()?.modelId) || wanted === this.refused) return;
    let embedder: Embedder | null;
    try {
      embedder = await this.loadModel(active.id);
    } catch (error) {
      this.refused = wanted;
      throw error;
    }
    if (!embedder) return;
    if (this.closing) return void (await embedder.close());
    this.problem = null;
    const inForce = this.activeEmbedding.embedder();
    if (!inForce) {
      await this.admin.open(embedder, async () => null);
      log.info({ model: embedder.modelId }, 'embedding model in force: search is hybrid; embedding pending chunks in the background');
      await this.admin.catchUp();
    } else {
      this.towards = embedder.modelId;
      log.warn({ from: inForce.modelId, to: embedder.modelId }, 'embedding model changed: rebuilding the vector index in the background; search uses the previous model meanwhile');
      await this.admin.rebuild(embedder);
    }
  }

  /**
   * First start with HEARTH_DEFAULT_EMBEDDER=shipped: the shipped files are copied into MODEL_DIR (checked against
   * their pins, well under a second) and loaded, for load() to put in force before the service takes requests. A
   * copy that fails leaves the service on keywords (null), with the reason in /api/health and /api/model-info.
   */
  private async installShipped(): Promise<Embedder | null> {
    try {
      const manifest = await installShippedEmbedder({ modelDir: this.options.modelDir });
      const embedder = await this.loadModel(manifest.id);
      if (!embedder) throw new Error(`${manifest.id} was installed but does not load`);
      this.options.log.info({ model: embedder.modelId }, 'no embedding model installed in MODEL_DIR: installed the embedder shipped with Hearth (potion-base-4M-int8, MIT); it goes in force now: search is hybrid (HEARTH_DEFAULT_EMBEDDER=off keeps keywords only)');
      return embedder;
    } catch (error) {
      this.fail('installing the embedder shipped with Hearth failed', error);
      return null;
    }
  }

  /** A default embedder that could not be put in force: the step for the open health check, the reason too for model-info. */
  private fail(step: string, error: unknown): void {
    this.failedStep = step;
    this.phase = { state: 'failed', detail: `${step} (${error instanceof Error ? error.message : String(error)})` };
    this.options.log.error({ err: error }, `${step}: search runs on keywords only`);
  }

  private startDefaultBuild(): void {
    const started = Date.now();
    const { modelDir, log } = this.options;
    this.build = installDefaultModelInBackground({ modelDir, dimension: this.options.defaultEmbedderDimension, activate: false }, (message) => {
      this.phase = { state: 'building', detail: message };
      log.info(`default embedder: ${message}`);
    });
    this.building = this.build.done
      .then(async (manifest) => {
        if (this.closing) return;
        // An admin may have installed another model meanwhile: it wins.
        if (!(await resolveActiveModel(modelDir, 'embedding'))) await setActiveModel(modelDir, 'embedding', manifest.id);
        await this.syncActiveModel();
        const embedder = this.activeEmbedding.embedder();
        if (!embedder) throw new Error('the built model could not be put in force');
        this.phase = null;
        log.info({ model: embedder.modelId, seconds: Math.round((Date.now() - started) / 1000) }, 'default embedder installed and in force: search is hybrid; embedding pending chunks in the background');
      })
      .catch((error: Error) => {
        if (!this.closing) this.fail('building the default embedder failed', error);
      });
  }
}
