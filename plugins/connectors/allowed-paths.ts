import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { badRequest } from '../../core/errors.js';

/** True when `real` is `root` or lies under it; the trailing separator keeps /app/docs2 out of /app/docs. */
export function isInside(real: string, root: string): boolean {
  if (real === root) return true;
  return real.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * CONNECTOR_ALLOWED_PATHS, the only places connectors may read. Roots are resolved on every use, so
 * a root created (or mounted) after boot counts and a missing one (/app/docs on a dev box) is ignored.
 */
export class AllowedPaths {
  constructor(private readonly configured: string[]) {}

  async realRoots(): Promise<string[]> {
    const roots = await Promise.all(this.configured.map((root) => realpath(root).catch(() => null)));
    return roots.filter((root): root is string => root !== null);
  }

  /** The real path, or null when it resolves outside every root. Throws the fs error (ENOENT, EACCES…). */
  async resolveInside(candidate: string, roots?: string[]): Promise<string | null> {
    const real = await realpath(candidate);
    return (roots ?? (await this.realRoots())).some((root) => isInside(real, root)) ? real : null;
  }

  /** A connector's directory: absolute, inside a root after symlinks and `..` are resolved, existing and readable. */
  async resolveDirectory(input: string, field = 'body.path'): Promise<string> {
    const list = this.configured.join(', ');
    const notAllowed = (why: string) => badRequest('path_not_allowed', `${why}; connectors may read only inside CONNECTOR_ALLOWED_PATHS (${list})`, field);
    if (!path.isAbsolute(input) || input.includes('\0')) throw notAllowed('The path must be absolute');
    const roots = await this.realRoots();
    let real: string | null;
    try {
      real = await this.resolveInside(input, roots);
    } catch (error) {
      // A missing path outside the roots says "not allowed", so admins cannot probe the rest of the disk.
      const lexical = path.resolve(input);
      if (![...this.configured, ...roots].some((root) => isInside(lexical, root))) throw notAllowed('This path is outside the allowed paths');
      throw badRequest('path_not_found', errorCode(error) === 'EACCES' ? 'The directory cannot be read by the service' : 'The directory does not exist', field);
    }
    if (!real) throw notAllowed('This path (after resolving symbolic links and "..") is outside the allowed paths');
    if (!(await stat(real)).isDirectory()) throw badRequest('path_not_found', 'The path is not a directory', field);
    try {
      await access(real, constants.R_OK | constants.X_OK);
    } catch {
      throw badRequest('path_not_found', 'The directory cannot be read by the service', field);
    }
    return real;
  }
}
