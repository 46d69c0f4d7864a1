import { clock } from '../../core/clock.js';
import { VERSION } from '../../core/version.js';
import type { HealthRepository } from './repository.js';
import type { ComponentReport, HealthReport } from './schemas.js';

/** What a probe answers; the registry adds the latency. */
type ComponentHealth = Omit<ComponentReport, 'latency_ms'>;
type HealthProbe = () => Promise<ComponentHealth>;

/** A probe that hangs must not hang the health check (nor a load balancer polling it). */
const PROBE_TIMEOUT_MS = 2_000;

type Logger = { warn: (obj: object, msg: string) => void };

/**
 * The component probes behind GET /api/health. Features plug in their real probe under a
 * component name (a later register() of the same name replaces the earlier probe).
 */
export class HealthService {
  private readonly probes = new Map<string, HealthProbe>();
  private readonly startedAt = clock.now();

  constructor(repository: HealthRepository, private readonly log: Logger) {
    this.register('database', async () => {
      await repository.ping();
      return { status: 'ok' };
    });
    this.register('vector_index', async () => ({ status: 'not_installed', detail: 'no vector index: search runs on keywords only' }));
    this.register('embedder', async () => ({ status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' }));
    this.register('chat_model', async () => ({ status: 'not_installed', detail: 'no chat model installed: answers are extractive' }));
  }

  register(name: string, probe: HealthProbe): void {
    this.probes.set(name, probe);
  }

  async report(): Promise<HealthReport> {
    const entries = await Promise.all([...this.probes].map(async ([name, probe]) => [name, await this.run(name, probe)] as const));
    const components = Object.fromEntries(entries) as HealthReport['components'];
    const ok = (name: string) => entries.some(([key, report]) => key === name && report.status === 'ok');
    const installed = (name: string) => !entries.some(([key, report]) => key === name && report.status === 'not_installed');
    const others = entries.filter(([name]) => name !== 'database');
    return {
      status: !ok('database') ? 'error' : others.every(([, report]) => report.status === 'ok') ? 'ok' : 'degraded',
      version: VERSION,
      uptime_seconds: Math.floor((clock.now() - this.startedAt) / 1000),
      components,
      capabilities: {
        // Hybrid search needs both the embedder (query vectors) and the index (document vectors).
        search: ok('embedder') && ok('vector_index') ? 'hybrid' : 'keyword',
        // A configured model that fails does not make chat extractive: chat answers with its error until it is fixed.
        answers: ok('chat_model') ? 'generative' : installed('chat_model') ? 'unavailable' : 'extractive',
      },
    };
  }

  /** Runs one probe; a throw or a timeout is an 'error' with a generic detail (the cause goes to the log only). */
  private async run(name: string, probe: HealthProbe): Promise<ComponentReport> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`probe timed out after ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    try {
      const result = await Promise.race([probe(), timeout]);
      return { status: result.status, latency_ms: elapsed(started), ...(result.detail ? { detail: result.detail } : {}) };
    } catch (err) {
      this.log.warn({ err, component: name }, 'health probe failed');
      return { status: 'error', latency_ms: elapsed(started), detail: `${name.replace(/_/g, ' ')} check failed` };
    } finally {
      clearTimeout(timer);
    }
  }
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;
