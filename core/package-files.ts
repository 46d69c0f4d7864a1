import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MODULE_DIR = path.dirname(fileURLToPath(import.meta.url));

/**
 * A file shipped beside the code (firmware-profiles/, systemd/): found from this module upwards, so the
 * same lookup works from the sources (core/) and from the build (dist/, whose chunks sit one level down).
 */
export function packageFile(...segments: string[]): string {
  for (let dir = MODULE_DIR; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, ...segments);
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) return path.join(MODULE_DIR, '..', ...segments);
  }
}

/** The installed package's folder (the one holding dist/ and package.json). */
export function packageRoot(): string {
  return path.dirname(packageFile('package.json'));
}
