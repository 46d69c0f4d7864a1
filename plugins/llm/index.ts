import fp from 'fastify-plugin';
import { loadGenerator, type Generator } from '../../native/llm/index.js';
import { BackendCheckCache } from './backend-check.js';
import { generatorOptions } from './generator-options.js';
import { llmRoutes } from './routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The chat model, or null (none installed, or it failed to load): answers are then extractive. */
    generator: Generator | null;
  }
}

/**
 * The chat model (native/llm picks the backend: hosted, INFERENCE_URL, or a local GGUF), its health
 * probe and GET /api/model-info. A model that fails to load leaves the service up, answering extractively.
 */
export default fp(
  async function llm(app) {
    let generator: Generator | null = null;
    let problem = false;
    try {
      generator = await loadGenerator({
        ...generatorOptions(app.config.llm),
        modelDir: app.config.modelDir,
        timeoutSeconds: () => app.settings.current('INFERENCE_TIMEOUT_SECONDS'),
        log: app.log,
      });
      if (!generator) app.log.warn('no chat model installed in MODEL_DIR/llm: answers are extractive (npm run models -- pull --model smollm2-135m-instruct-q8, or import-llm)');
    } catch (error) {
      problem = true;
      app.log.error({ err: error }, 'the chat model could not be loaded: answers are extractive');
    }
    app.decorate('generator', generator);

    const backendCheck = new BackendCheckCache(app.log);
    app.health.register('chat_model', async () => {
      const generator = app.generator;
      if (generator) {
        // A remote backend is asked whether it answers: configured is not the same as working.
        const reachability = await backendCheck.check(generator);
        if (reachability && reachability.state !== 'ok') {
          return { status: reachability.state === 'unreachable' ? 'unreachable' : 'error', detail: `${reachability.detail}; chat answers fail until that is fixed` };
        }
        const info = generator.info();
        return { status: 'ok', detail: `${info.model} (${info.backend}, ${info.device})` };
      }
      return problem
        ? { status: 'error', detail: 'the chat model could not be loaded: answers are extractive' }
        : { status: 'not_installed', detail: 'no chat model installed: answers are extractive' };
    });
    app.addHook('onClose', async () => {
      await app.generator?.close();
    });
    await app.register(llmRoutes);
  },
  { name: 'llm', dependencies: ['hearth-guard', 'health', 'search-index'] },
);
