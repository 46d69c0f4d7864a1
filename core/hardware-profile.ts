import { existsSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageFile } from './package-files.js';

/**
 * Hardware-aware defaults: the device is detected (a Jetson board and its L4T release, else the cores and
 * memory present) and the matching firmware-profiles/ preset supplies defaults under anything set explicitly.
 * Sync and file-based, so that loadConfig stays sync and a test can hand in a fake root of real files.
 */

/** The variables a profile may default; anything else in a profile file is ignored by the service. */
export const PROFILE_VARIABLES = ['N_CTX', 'N_THREADS', 'N_GPU_LAYERS', 'EMBED_DEVICE', 'INDEX_EXTRACTION_WORKERS', 'BACKEND_WORKERS'] as const;
type ProfileVariable = (typeof PROFILE_VARIABLES)[number];

export interface DetectedDevice {
  /** /proc/device-tree/model without its trailing NUL, or null off a Jetson. */
  jetsonModel: string | null;
  /** From /etc/nv_tegra_release, e.g. 36.4.0. */
  l4tRelease: string | null;
  cores: number;
  memoryBytes: number;
  arch: string;
}

export interface HardwareProfile {
  /** A firmware-profiles/ file name without .env, or "generic" when none matched. */
  name: string;
  /** Why this one: the facts it was chosen on, in words, for the log and /api/hardware. */
  reason: string;
  /** Defaults this profile gives (already capped by the cores present); explicit variables win over them. */
  defaults: Partial<Record<ProfileVariable, string>>;
  /** HEARTH_MEMORY_MAX of the profile: the unit's MemoryMax (install-service), null when the profile sets none. */
  memoryMax: string | null;
}

export interface DetectOptions {
  /** A root holding proc/device-tree/model and etc/nv_tegra_release (tests: a temp folder); "/" by default. */
  systemRoot?: string;
  cores?: number;
  memoryBytes?: number;
}

/** firmware-profiles/ beside core/ (sources) or beside dist/ (the build). */
export const profilesDir = () => packageFile('firmware-profiles');

function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // absent off a Jetson
  }
}

/** "# R36 (release), REVISION: 4.0, GCID: ..." -> "36.4.0". */
export function parseL4tRelease(text: string): string | null {
  const match = /R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)/.exec(text);
  return match ? `${match[1]}.${match[2].replace(/\.$/, '')}` : null;
}

export function detectDevice(options: DetectOptions = {}): DetectedDevice {
  const root = options.systemRoot ?? '/';
  // The device-tree string ends with a NUL byte.
  const model = readOptional(path.join(root, 'proc/device-tree/model'))?.replace(/\0/g, '').trim() || null;
  const tegra = readOptional(path.join(root, 'etc/nv_tegra_release'));
  const isJetson = !!model?.includes('Jetson') || tegra !== undefined;
  return {
    jetsonModel: isJetson ? model : null,
    l4tRelease: tegra === undefined ? null : parseL4tRelease(tegra),
    cores: options.cores ?? os.availableParallelism(),
    memoryBytes: options.memoryBytes ?? os.totalmem(),
    arch: process.arch,
  };
}

/** A profile file: KEY=VALUE lines, # comments. */
export function parseProfileFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Z][A-Z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (match) values[match[1]] = match[2];
  }
  return values;
}

const GIB = 1024 ** 3;
/** The x86 preset is written for 4 cores and 16 GB; bigger boxes derive everything from their cores. */
const SMALL_SERVER = { maxCores: 4, maxMemoryBytes: 32 * GIB };

/** Which preset fits the device: the Jetson board by name, a small x86 box, or none. */
function matchProfile(device: DetectedDevice): { name: string; reason: string } | null {
  const board = device.jetsonModel ?? '';
  const l4t = device.l4tRelease ? `, L4T ${device.l4tRelease}` : '';
  if (/AGX Orin/i.test(board)) return { name: 'jetson-agx-orin', reason: `${board}${l4t}` };
  if (/Orin NX/i.test(board)) return { name: 'jetson-orin-nx', reason: `${board}${l4t}` };
  if (/Orin Nano/i.test(board)) return { name: 'jetson-orin-nano', reason: `${board}${l4t}` };
  if (device.arch === 'x64' && device.cores <= SMALL_SERVER.maxCores && device.memoryBytes <= SMALL_SERVER.maxMemoryBytes) {
    return { name: 'x86-small-server', reason: `x86-64, ${device.cores} cores, ${Math.round(device.memoryBytes / GIB)} GiB` };
  }
  return null;
}

/**
 * Inference threads for the cores present: all of them but one, never fewer than one. Measured with
 * bench/threads.ts (stories260K, docs/appliance.md): on 2 cores, 1 thread decodes as fast as 2 and
 * leaves a core to the HTTP loop and extraction; more threads than cores collapses throughput.
 */
export function inferenceThreads(cores: number): number {
  return Math.max(1, cores - 1);
}

function capped(value: string | undefined, cap: number): string {
  const parsed = Number(value);
  return String(Number.isInteger(parsed) && parsed > 0 ? Math.min(parsed, cap) : cap);
}

/** The profile for this device (HEARTH_HARDWARE_PROFILE names one explicitly; "generic" uses none). */
export function chooseProfile(device: DetectedDevice, requested?: string, dir = profilesDir()): HardwareProfile {
  const available = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.env')).map((f) => f.slice(0, -4)) : [];
  let match: { name: string; reason: string } | null;
  if (requested && requested !== 'auto') {
    if (requested !== 'generic' && !available.includes(requested)) {
      throw new Error(`"${requested}" is not a profile: choose auto, generic or one of ${available.join(', ')}`);
    }
    match = requested === 'generic' ? null : { name: requested, reason: 'HEARTH_HARDWARE_PROFILE' };
  } else {
    match = matchProfile(device);
    if (match && !available.includes(match.name)) match = null;
  }
  const file = match ? parseProfileFile(readFileSync(path.join(dir, `${match.name}.env`), 'utf8')) : {};
  const defaults: HardwareProfile['defaults'] = {};
  for (const name of PROFILE_VARIABLES) if (file[name] !== undefined) defaults[name] = file[name];
  // The cores actually present cap what a preset assumes (a board with cores offline, a container's share).
  defaults.N_THREADS = capped(file.N_THREADS, inferenceThreads(device.cores));
  defaults.INDEX_EXTRACTION_WORKERS = capped(file.INDEX_EXTRACTION_WORKERS, Math.max(1, device.cores - 1));
  return {
    name: match?.name ?? 'generic',
    reason: match?.reason ?? `${device.arch}, ${device.cores} cores, ${Math.round(device.memoryBytes / GIB)} GiB: no preset matched`,
    defaults,
    memoryMax: file.HEARTH_MEMORY_MAX ?? null,
  };
}
