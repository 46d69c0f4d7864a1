import pkg from '../package.json' with { type: 'json' };

/** The release version, from package.json (bundled at build time, so dist/ needs no package.json beside it). */
export const VERSION: string = pkg.version;
