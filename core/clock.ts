/**
 * The one clock. Everything time-dependent (tokens, watermarks, licence expiry, throttles) reads it,
 * so tests move time with vitest's fake Date (vi.setSystemTime) instead of sleeping.
 */
export const clock = {
  now(): number {
    return Date.now();
  },
  nowSeconds(): number {
    return Math.floor(Date.now() / 1000);
  },
  iso(ms: number = Date.now()): string {
    return new Date(ms).toISOString();
  },
};
