import { clock } from '../clock.js';
import type { SeedKey, SeedSettings } from '../config.js';
import type { SettingsRepository } from './repository.js';

type Listener = (key: string, value: unknown) => void;

/**
 * Runtime settings: seeded from the environment on first boot, authoritative afterwards.
 * Held in memory (reads are on hot paths) and written through to SQLite.
 */
export class SettingsStore {
  private readonly values = new Map<string, unknown>();
  private readonly listeners: Listener[] = [];

  private constructor(private readonly repository: SettingsRepository) {}

  static async open(repository: SettingsRepository, seed: SeedSettings): Promise<SettingsStore> {
    const store = new SettingsStore(repository);
    await repository.insertMissing(
      Object.entries(seed).map(([key, value]) => ({ key, value: JSON.stringify(value) })),
      clock.now(),
    );
    for (const row of await repository.all()) store.values.set(row.key, JSON.parse(row.value));
    return store;
  }

  /** The live value of a setting (seeded from the environment on first boot, changed by admins since). */
  current<K extends SeedKey>(key: K): SeedSettings[K] {
    return this.values.get(key) as SeedSettings[K];
  }

  get<T>(key: string, fallback: T): T {
    return this.values.has(key) ? (this.values.get(key) as T) : fallback;
  }

  /** Writes several settings in one transaction, then tells the listeners. */
  async set(entries: Record<string, unknown>): Promise<void> {
    await this.repository.upsert(
      Object.entries(entries).map(([key, value]) => ({ key, value: JSON.stringify(value) })),
      clock.now(),
    );
    for (const [key, value] of Object.entries(entries)) {
      this.values.set(key, value);
      for (const listener of this.listeners) listener(key, value);
    }
  }

  onChange(listener: Listener): void {
    this.listeners.push(listener);
  }
}
