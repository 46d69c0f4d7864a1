import { api, authorizedFetch } from '../api/client';
import { errorFromResponse } from '../api/errors';

export type ComponentStatus = 'ok' | 'not_installed' | 'unreachable' | 'error';

export interface HealthReport {
  status: 'ok' | 'degraded' | 'error';
  version: string;
  uptime_seconds: number;
  components: Record<string, { status: ComponentStatus; latency_ms: number; detail?: string }>;
  capabilities: { search: 'hybrid' | 'keyword'; answers: 'generative' | 'extractive' | 'unavailable' };
}

export interface Hardware {
  cpu: { manufacturer: string; brand: string; cores: number; physical_cores: number; speed_ghz: number | null };
  memory: { total_bytes: number; available_bytes: number };
  gpus: { vendor: string; model: string; vram_bytes: number | null }[];
  os: { platform: string; distro: string; release: string; arch: string };
  jetson: { model: string | null; l4t_release: string | null } | null;
  node_version: string;
}

export interface ModelInfo {
  chat: {
    backend: 'local' | 'hosted' | 'inference-server';
    model: string;
    file: string | null;
    parameters: number | null;
    quantisation: string | null;
    context: { requested: number; effective: number; trained: number | null };
    threads: number | null;
    gpu_layers: number | null;
    device: 'cpu' | 'cuda' | 'remote';
  } | null;
  embedding: { model_id: string; dimension: number; device: string; max_tokens: number } | null;
  default_embedder?: { state: 'off' | 'not_needed' | 'building' | 'installed' | 'failed'; detail: string };
  mode: { search: 'hybrid' | 'keyword'; answers: 'generative' | 'extractive' | 'unavailable' };
}

/** A failing database is a 503 that still carries the report, which is what the page shows. */
export async function health(): Promise<HealthReport> {
  const response = await authorizedFetch('/api/health', { headers: { accept: 'application/json' } });
  if (response.status === 503) {
    const report = (await response.clone().json().catch(() => null)) as HealthReport | null;
    if (report?.components) return report;
  }
  if (!response.ok) throw await errorFromResponse(response);
  return (await response.json()) as HealthReport;
}

export const hardware = () => api<Hardware>('/api/hardware');
export const modelInfo = () => api<ModelInfo>('/api/model-info');
