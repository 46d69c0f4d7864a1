import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectJetson, type HardwareProbe, parseL4tRelease } from '../../plugins/hardware/probe.js';
import type { GpuView } from '../../plugins/hardware/schemas.js';
import { HardwareService } from '../../plugins/hardware/service.js';
import { startApp, type TestApp } from '../helpers.js';

describe('GET /api/hardware', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => t.close());

  it('needs a token', async () => {
    const res = await t.request({ method: 'GET', url: '/api/hardware' });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
  });

  it('describes this machine to a viewer', async () => {
    const { access } = await t.userWithRole('viewer');
    const res = await t.request({ method: 'GET', url: '/api/hardware', token: access });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['cpu', 'gpus', 'jetson', 'memory', 'node_version', 'os', 'profile']);
    expect(body.cpu).toEqual({
      manufacturer: expect.any(String),
      brand: expect.any(String),
      cores: expect.any(Number),
      physical_cores: expect.any(Number),
      speed_ghz: body.cpu.speed_ghz === null ? null : expect.any(Number),
    });
    expect(body.cpu.cores).toBeGreaterThan(0);
    expect(body.memory.total_bytes).toBe(os.totalmem());
    expect(body.memory.available_bytes).toBeGreaterThan(0);
    expect(body.memory.available_bytes).toBeLessThanOrEqual(body.memory.total_bytes);
    expect(Array.isArray(body.gpus)).toBe(true);
    for (const gpu of body.gpus) {
      expect(gpu).toEqual({ vendor: expect.any(String), model: expect.any(String), vram_bytes: gpu.vram_bytes === null ? null : expect.any(Number) });
    }
    expect(body.os).toEqual({ platform: process.platform, distro: expect.any(String), release: expect.any(String), arch: expect.any(String) });
    expect(body.jetson === null || typeof body.jetson === 'object').toBe(true);
    expect(body.node_version).toBe(process.version);

    const again = (await t.request({ method: 'GET', url: '/api/hardware', token: access })).json();
    expect({ ...again, memory: null }).toEqual({ ...body, memory: null });
  });
});

const PROFILE = { name: 'generic', reason: 'test', applied: {} };
const CPU = { manufacturer: 'ARM', brand: 'Cortex-A78AE', cores: 6, physical_cores: 6, speed_ghz: null };
const OS = { platform: 'linux', distro: 'Ubuntu', release: '22.04', arch: 'arm64' };

/** A probe that counts its calls; gpus() is whatever the test passes. */
function fakeProbe(gpus: () => Promise<GpuView[]>) {
  const calls = { cpu: 0, gpus: 0, memory: 0 };
  let available = 1000;
  const probe: HardwareProbe = {
    cpu: async () => (calls.cpu++, CPU),
    gpus: () => (calls.gpus++, gpus()),
    memory: async () => (calls.memory++, { total_bytes: 4096, available_bytes: available-- }),
    os: async () => OS,
    jetson: async () => null,
  };
  return { probe, calls };
}

describe('HardwareService', () => {
  it('probes the static facts once and memory on every call', async () => {
    const { probe, calls } = fakeProbe(async () => [{ vendor: 'NVIDIA', model: 'RTX 4000', vram_bytes: 8 * 1024 ** 3 }]);
    const service = new HardwareService(probe, PROFILE);
    const [first, second] = await Promise.all([service.get(), service.get()]);
    const third = await service.get();
    expect(calls).toEqual({ cpu: 1, gpus: 1, memory: 3 });
    expect(first.gpus).toHaveLength(1);
    expect(new Set([first, second, third].map((view) => view.memory.available_bytes)).size).toBe(3);
  });

  it('falls back to no GPUs when graphics probing hangs, and does not ask again', async () => {
    const { probe, calls } = fakeProbe(() => new Promise(() => undefined));
    const service = new HardwareService(probe, PROFILE, 20);
    expect((await service.get()).gpus).toEqual([]);
    expect((await service.get()).gpus).toEqual([]);
    expect(calls.gpus).toBe(1);
  });

  it('falls back to no GPUs when graphics probing fails', async () => {
    const { probe } = fakeProbe(async () => {
      throw new Error('lspci not found');
    });
    expect((await new HardwareService(probe, PROFILE, 1000).get()).gpus).toEqual([]);
  });

  it('lists a Jetson’s integrated GPU when graphics probing finds none', async () => {
    const { probe } = fakeProbe(async () => []);
    probe.jetson = async () => ({ model: 'NVIDIA Jetson Orin Nano Developer Kit', l4t_release: '36.4.0' });
    expect((await new HardwareService(probe, PROFILE).get()).gpus).toEqual([
      { vendor: 'NVIDIA', model: 'NVIDIA Jetson Orin Nano Developer Kit (integrated)', vram_bytes: null },
    ]);
  });

  it('retries the static facts after a failed probe', async () => {
    const { probe, calls } = fakeProbe(async () => []);
    let failNext = true;
    const cpu = probe.cpu;
    probe.cpu = async () => {
      if (failNext) {
        failNext = false;
        throw new Error('transient');
      }
      return cpu();
    };
    const service = new HardwareService(probe, PROFILE);
    await expect(service.get()).rejects.toThrow('transient');
    expect((await service.get()).cpu).toEqual(CPU);
    expect(calls.cpu).toBe(1);
  });
});

describe('Jetson detection', () => {
  let dir: string;
  const files = () => ({ deviceTreeModel: path.join(dir, 'model'), tegraRelease: path.join(dir, 'nv_tegra_release') });
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-jetson-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses the L4T release line', () => {
    expect(parseL4tRelease('# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64')).toBe('36.4.0');
    expect(parseL4tRelease('# R32 (release), REVISION: 7.1, GCID: 29818004, BOARD: t210ref')).toBe('32.7.1');
    expect(parseL4tRelease('garbage')).toBeNull();
  });

  it('is null when neither file exists', async () => {
    expect(await detectJetson(files())).toBeNull();
  });

  it('is null for a device tree that is not a Jetson', async () => {
    writeFileSync(files().deviceTreeModel, 'Raspberry Pi 5 Model B Rev 1.0\0');
    expect(await detectJetson(files())).toBeNull();
  });

  it('reads the board model (without its NUL) and the L4T release', async () => {
    writeFileSync(files().deviceTreeModel, 'NVIDIA Jetson Orin Nano Developer Kit\0');
    expect(await detectJetson(files())).toEqual({ model: 'NVIDIA Jetson Orin Nano Developer Kit', l4t_release: null });
    writeFileSync(files().tegraRelease, '# R36 (release), REVISION: 3.0, GCID: 36191598, BOARD: generic, EABI: aarch64\n');
    expect(await detectJetson(files())).toEqual({ model: 'NVIDIA Jetson Orin Nano Developer Kit', l4t_release: '36.3.0' });
  });

  it('is detected from nv_tegra_release alone', async () => {
    rmSync(files().deviceTreeModel);
    expect(await detectJetson(files())).toEqual({ model: null, l4t_release: '36.3.0' });
  });
});

describe('hardware profile at start', () => {
  let root: string;
  beforeAll(() => {
    // A fake system root of real files, read by the service exactly as it reads / on a Jetson.
    root = mkdtempSync(path.join(os.tmpdir(), 'hearth-root-'));
    mkdirSync(path.join(root, 'proc', 'device-tree'), { recursive: true });
    mkdirSync(path.join(root, 'etc'));
    writeFileSync(path.join(root, 'proc', 'device-tree', 'model'), 'NVIDIA Jetson Orin Nano Developer Kit\0');
    writeFileSync(path.join(root, 'etc', 'nv_tegra_release'), '# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64\n');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('applies the Jetson preset as defaults, logs it and shows it in /api/hardware', async () => {
    const t = await startApp({ HEARTH_SYSTEM_ROOT: root });
    try {
      expect(t.app.config.llm).toMatchObject({ nCtx: 4096, nGpuLayers: -1 });
      expect(t.app.config.embedDevice).toBe('cuda');
      const { access } = await t.userWithRole('viewer');
      const body = (await t.request({ method: 'GET', url: '/api/hardware', token: access })).json();
      expect(body.jetson).toEqual({ model: 'NVIDIA Jetson Orin Nano Developer Kit', l4t_release: '36.4.0' });
      expect(body.profile).toMatchObject({ name: 'jetson-orin-nano', reason: 'NVIDIA Jetson Orin Nano Developer Kit, L4T 36.4.0' });
      expect(body.profile.applied).toMatchObject({ N_CTX: '4096', N_GPU_LAYERS: '-1', EMBED_DEVICE: 'cuda' });
      // The preset's 6 threads and 2 extraction workers are capped by the cores of the machine running the test.
      expect(body.profile.applied.N_THREADS).toBe(String(Math.min(6, Math.max(1, os.availableParallelism() - 1))));
      expect(t.app.config.llm.nThreads).toBe(Number(body.profile.applied.N_THREADS));
      expect(t.logs()).toContain('hardware profile jetson-orin-nano');
    } finally {
      await t.close();
    }
  });

  it('never overrides a variable set explicitly', async () => {
    const t = await startApp({ HEARTH_SYSTEM_ROOT: root, N_CTX: '2048', N_THREADS: '1', EMBED_DEVICE: 'cpu' });
    try {
      expect(t.app.config.llm).toMatchObject({ nCtx: 2048, nThreads: 1, nGpuLayers: -1 });
      expect(t.app.config.embedDevice).toBe('cpu');
      const { access } = await t.userWithRole('viewer');
      const { applied } = (await t.request({ method: 'GET', url: '/api/hardware', token: access })).json().profile;
      expect(Object.keys(applied)).not.toContain('N_CTX');
      expect(Object.keys(applied)).not.toContain('EMBED_DEVICE');
      expect(applied.N_GPU_LAYERS).toBe('-1');
    } finally {
      await t.close();
    }
  });

  it('refuses an unknown HEARTH_HARDWARE_PROFILE at start', async () => {
    await expect(startApp({ HEARTH_HARDWARE_PROFILE: 'toaster' })).rejects.toThrow(/HEARTH_HARDWARE_PROFILE.*toaster/);
  });
});
