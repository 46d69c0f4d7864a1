import { readFile } from 'node:fs/promises';
import { cpu, graphics, mem, osInfo } from 'systeminformation';
import { parseL4tRelease } from '../../core/hardware-profile.js';
import type { CpuView, GpuView, JetsonView, MemoryView, OsView } from './schemas.js';

/** Where the hardware facts come from; tests pass a fake. */
export interface HardwareProbe {
  cpu(): Promise<CpuView>;
  memory(): Promise<MemoryView>;
  gpus(): Promise<GpuView[]>;
  os(): Promise<OsView>;
  jetson(): Promise<JetsonView | null>;
}

const JETSON_FILES = { deviceTreeModel: '/proc/device-tree/model', tegraRelease: '/etc/nv_tegra_release' };

const MIB = 1024 * 1024;

/** Absent or unreadable files are normal off Jetson. */
async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

export { parseL4tRelease };

export async function detectJetson(files = JETSON_FILES): Promise<JetsonView | null> {
  // The device-tree string ends with a NUL byte.
  const model = (await readOptional(files.deviceTreeModel))?.replace(/\0/g, '').trim() || null;
  const tegraRelease = await readOptional(files.tegraRelease);
  if (!model?.includes('Jetson') && tegraRelease === undefined) return null;
  return { model, l4t_release: tegraRelease === undefined ? null : parseL4tRelease(tegraRelease) };
}

/** The real machine, through systeminformation and a few files. */
export function systemProbe(files = JETSON_FILES): HardwareProbe {
  return {
    async cpu() {
      const info = await cpu();
      return {
        manufacturer: info.manufacturer,
        brand: info.brand,
        cores: info.cores,
        physical_cores: info.physicalCores,
        speed_ghz: info.speed > 0 ? info.speed : null,
      };
    },
    async memory() {
      const info = await mem();
      return { total_bytes: info.total, available_bytes: info.available };
    },
    async gpus() {
      const { controllers } = await graphics();
      return controllers.map((gpu) => ({
        vendor: gpu.vendor ?? '',
        model: gpu.model ?? '',
        vram_bytes: typeof gpu.vram === 'number' && gpu.vram > 0 ? Math.round(gpu.vram * MIB) : null,
      }));
    },
    async os() {
      const info = await osInfo();
      return { platform: info.platform, distro: info.distro, release: info.release, arch: info.arch };
    },
    jetson: () => detectJetson(files),
  };
}
