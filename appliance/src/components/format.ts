/** How numbers and dates read in the UI. */

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export const formatDate = (iso: string | null) => (iso ? dateTime.format(new Date(iso)) : '');

export const formatMs = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`);

/** 90 → "1 min 30 s", 604800 → "7 d": the two largest units, for lifetimes and uptimes. */
export function formatDuration(seconds: number): string {
  const units: [number, string][] = [[86400, 'd'], [3600, 'h'], [60, 'min'], [1, 's']];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(seconds));
  for (const [size, unit] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    } else if (parts.length) break;
  }
  return parts.join(' ') || '0 s';
}
