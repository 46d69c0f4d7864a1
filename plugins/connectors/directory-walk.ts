import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AllowedPaths } from './allowed-paths.js';

/** Deep enough for any real document tree; a bound so a pathological tree cannot run forever. */
const MAX_DEPTH = 32;

interface WalkOptions {
  recursive: boolean;
  /** Lower-case extensions with their dot; empty = every file (the documents service skips unsupported types). */
  include: string[];
}

interface FoundFile {
  /** Resolved path: what is read, and the document's identity (source_path). */
  realPath: string;
  /** As seen from the connector's folder, for progress and logs. */
  relativePath: string;
  /** The real file's name: a document is the file a link points to, not the link. */
  name: string;
}

interface WalkResult {
  files: FoundFile[];
  /** Entries whose real path lies outside CONNECTOR_ALLOWED_PATHS: skipped, never read. */
  escaping: string[];
  /** Broken links, permission errors, entries that vanished mid-walk. */
  unreadable: string[];
  /** Real paths of directories that could not be listed: documents under them are kept, not taken for deleted. */
  unlistedDirs: string[];
  /** Directories below MAX_DEPTH, not entered. */
  tooDeep: string[];
}

/**
 * Lists the files a connector selects. Every entry is resolved again (a link or a directory swapped
 * since the connector was saved must not lead outside the allowed roots); hidden entries are skipped,
 * each real directory is entered once (link loops end) and each real file is listed once.
 */
export async function walkDirectory(root: string, options: WalkOptions, allowed: AllowedPaths, checkpoint: () => void): Promise<WalkResult> {
  const roots = await allowed.realRoots();
  const result: WalkResult = { files: [], escaping: [], unreadable: [], unlistedDirs: [], tooDeep: [] };
  const include = new Set(options.include);
  const seenFiles = new Set<string>();
  const seenDirs = new Set<string>([root]);
  const pending: Array<{ real: string; relative: string; depth: number }> = [{ real: root, relative: '', depth: 0 }];

  while (pending.length) {
    checkpoint();
    const dir = pending.shift()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir.real, { withFileTypes: true });
    } catch {
      result.unreadable.push(dir.relative || '.');
      result.unlistedDirs.push(dir.real);
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const relative = dir.relative ? `${dir.relative}/${entry.name}` : entry.name;
      let real: string | null;
      let isDirectory: boolean;
      let isFile: boolean;
      try {
        real = await allowed.resolveInside(path.join(dir.real, entry.name), roots);
        if (!real) {
          result.escaping.push(relative);
          continue;
        }
        const info = await stat(real);
        [isDirectory, isFile] = [info.isDirectory(), info.isFile()];
      } catch {
        result.unreadable.push(relative);
        continue;
      }
      if (isDirectory) {
        if (!options.recursive || seenDirs.has(real)) continue;
        if (dir.depth + 1 > MAX_DEPTH) {
          result.tooDeep.push(relative);
          continue;
        }
        seenDirs.add(real);
        pending.push({ real, relative, depth: dir.depth + 1 });
      } else if (isFile && !seenFiles.has(real) && (include.size === 0 || include.has(path.extname(real).toLowerCase()))) {
        // Only regular files: reading a FIFO or a device would block the scan or never end.
        seenFiles.add(real);
        result.files.push({ realPath: real, relativePath: relative, name: path.basename(real) });
      }
    }
  }
  return result;
}
