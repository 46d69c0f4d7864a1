import { TokenService } from '../../core/auth/tokens.js';
import { cliSecretDirs } from './credentials.js';
import { loadConfig, type Config } from '../../core/config.js';
import { openDatabase, type Db } from '../../core/db/database.js';
import { SettingsRepository } from '../../core/settings/repository.js';
import { SettingsStore } from '../../core/settings/store.js';
import { Entitlement } from '../../core/tiers.js';
import { SessionService, SessionsRepository } from '../../plugins/sessions/index.js';
import { UsersRepository, UsersService } from '../../plugins/users/index.js';

/**
 * The service's own state opened by a CLI command: the same config, the same SQLite file (WAL and a
 * busy_timeout, so a running service and the command wait for each other's writes instead of failing),
 * and the same services with their rules: the CLI never writes users or sessions with SQL of its own.
 */
export interface ServiceState {
  config: Config;
  db: Db;
  users: UsersService;
  sessions: SessionService;
  close: () => Promise<void>;
}

export async function openServiceState(env: NodeJS.ProcessEnv): Promise<ServiceState> {
  const config = loadConfig(env, { secretDirs: cliSecretDirs(env) });
  const db = await openDatabase(config.databaseFile);
  try {
    const settings = await SettingsStore.open(new SettingsRepository(db), config.seed);
    const users = new UsersService(new UsersRepository(db), { requireEmail: false });
    const sessions = new SessionService(new SessionsRepository(db), users, new TokenService(config.jwtSecretKey, config.jwtAlgorithm), settings, new Entitlement());
    // As in the service: a password changed ends the user's sessions.
    users.onChange({ userChanged: () => undefined, passwordChanged: async (userId) => void (await sessions.revokeUser(userId)) });
    return { config, db, users, sessions, close: () => db.destroy() };
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

export async function withServiceState<T>(env: NodeJS.ProcessEnv, work: (state: ServiceState) => Promise<T>): Promise<T> {
  const state = await openServiceState(env);
  try {
    return await work(state);
  } finally {
    await state.close();
  }
}
