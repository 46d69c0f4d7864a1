import addon from '@hearth/hnsw-int8';

/**
 * Soft term matching's arithmetic, in the addon beside the int8 distance code: every candidate word against every
 * question term, then each chunk's best match per term (the contract is on the addon's declaration).
 */
export const softMatchScores: typeof addon.softMatchScores = addon.softMatchScores;
