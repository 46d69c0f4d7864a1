import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseProfile, detectDevice, inferenceThreads, type DetectedDevice } from './hardware-profile.js';

const GIB = 1024 ** 3;
const device = (over: Partial<DetectedDevice>): DetectedDevice => ({ jetsonModel: null, l4tRelease: null, cores: 2, memoryBytes: 8 * GIB, arch: 'x64', ...over });

describe('chooseProfile', () => {
  it('matches each Jetson board by its device-tree model', () => {
    expect(chooseProfile(device({ jetsonModel: 'NVIDIA Jetson AGX Orin Developer Kit', cores: 12, arch: 'arm64' })).name).toBe('jetson-agx-orin');
    expect(chooseProfile(device({ jetsonModel: 'NVIDIA Jetson Orin NX Engineering Reference Developer Kit', cores: 8, arch: 'arm64' })).name).toBe('jetson-orin-nx');
    expect(chooseProfile(device({ jetsonModel: 'NVIDIA Jetson Orin Nano Developer Kit', cores: 6, arch: 'arm64' })).name).toBe('jetson-orin-nano');
  });

  it('takes the preset as defaults, capped by the cores present, with the unit MemoryMax', () => {
    const nano = chooseProfile(device({ jetsonModel: 'NVIDIA Jetson Orin Nano Developer Kit', cores: 6, arch: 'arm64' }));
    expect(nano.defaults).toEqual({ N_CTX: '4096', N_THREADS: '5', N_GPU_LAYERS: '-1', EMBED_DEVICE: 'cuda', INDEX_EXTRACTION_WORKERS: '2', BACKEND_WORKERS: '1' });
    expect(nano.memoryMax).toBe('6G');
    const small = chooseProfile(device({ cores: 2 }));
    expect(small.name).toBe('x86-small-server');
    expect(small.defaults).toMatchObject({ N_THREADS: '1', INDEX_EXTRACTION_WORKERS: '1', N_GPU_LAYERS: '0' });
  });

  it('falls back to generic, derived from the cores, on a box no preset describes', () => {
    const big = chooseProfile(device({ cores: 32, memoryBytes: 128 * GIB }));
    expect(big.name).toBe('generic');
    expect(big.defaults).toEqual({ N_THREADS: '31', INDEX_EXTRACTION_WORKERS: '31' });
    expect(chooseProfile(device({ arch: 'arm64', cores: 4 })).name).toBe('generic');
  });

  it('honours an explicit choice and refuses an unknown one', () => {
    expect(chooseProfile(device({ cores: 2 }), 'generic').name).toBe('generic');
    expect(chooseProfile(device({ cores: 16, memoryBytes: 64 * GIB }), 'jetson-orin-nx').defaults.N_THREADS).toBe('6');
    expect(() => chooseProfile(device({}), 'toaster')).toThrow(/not a profile/);
  });

  it('never asks for fewer than one thread', () => {
    expect(inferenceThreads(1)).toBe(1);
    expect(chooseProfile(device({ cores: 1 })).defaults).toMatchObject({ N_THREADS: '1', INDEX_EXTRACTION_WORKERS: '1' });
  });
});

describe('detectDevice', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'hearth-root-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads the board and L4T release under a given root, and nothing else there', () => {
    expect(detectDevice({ systemRoot: root, cores: 3, memoryBytes: GIB })).toEqual({ jetsonModel: null, l4tRelease: null, cores: 3, memoryBytes: GIB, arch: process.arch });
    mkdirSync(path.join(root, 'proc', 'device-tree'), { recursive: true });
    mkdirSync(path.join(root, 'etc'));
    writeFileSync(path.join(root, 'proc', 'device-tree', 'model'), 'NVIDIA Jetson AGX Orin Developer Kit\0');
    writeFileSync(path.join(root, 'etc', 'nv_tegra_release'), '# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref\n');
    expect(detectDevice({ systemRoot: root })).toMatchObject({ jetsonModel: 'NVIDIA Jetson AGX Orin Developer Kit', l4tRelease: '35.4.1' });
  });
});
