import type { HardwareProbe } from './probe.js';
import type { CpuView, GpuView, HardwareView, JetsonView, OsView, ProfileView } from './schemas.js';

interface StaticFacts {
  cpu: CpuView;
  gpus: GpuView[];
  os: OsView;
  jetson: JetsonView | null;
}

/** systeminformation's graphics() shells out (lspci, nvidia-smi) and can hang on odd hardware. */
const GPU_PROBE_TIMEOUT_MS = 5_000;

function withFallback<T>(work: Promise<T>, fallback: T, ms: number): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
    work.then(resolve, () => resolve(fallback)).finally(() => clearTimeout(timer));
  });
}

/** Hardware facts: what cannot change while running is probed once; memory is read each time. */
export class HardwareService {
  private facts: Promise<StaticFacts> | undefined;

  constructor(
    private readonly probe: HardwareProbe,
    private readonly profile: ProfileView,
    private readonly gpuTimeoutMs = GPU_PROBE_TIMEOUT_MS,
  ) {}

  async get(): Promise<HardwareView> {
    const [facts, memory] = await Promise.all([this.staticFacts(), this.probe.memory()]);
    return { ...facts, memory, node_version: process.version, profile: this.profile };
  }

  private staticFacts(): Promise<StaticFacts> {
    this.facts ??= this.probeStatic().catch((error: unknown) => {
      this.facts = undefined; // a failed probe is retried on the next request
      throw error;
    });
    return this.facts;
  }

  private async probeStatic(): Promise<StaticFacts> {
    const [cpu, gpus, os, jetson] = await Promise.all([
      this.probe.cpu(),
      withFallback(this.probe.gpus(), [], this.gpuTimeoutMs),
      this.probe.os(),
      this.probe.jetson(),
    ]);
    // A Jetson's GPU is part of the SoC: graphics() rarely lists it, and its memory is the system's.
    const onChip = jetson && gpus.length === 0 ? [{ vendor: 'NVIDIA', model: `${jetson.model ?? 'Jetson'} (integrated)`, vram_bytes: null }] : [];
    return { cpu, gpus: [...gpus, ...onChip], os, jetson };
  }
}
