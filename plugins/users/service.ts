import { randomBytes, randomUUID } from 'node:crypto';
import { assertPasswordPolicy, hashPassword } from '../../core/auth/passwords.js';
import type { Role } from '../../core/auth/guard.js';
import { clock } from '../../core/clock.js';
import { isUniqueViolation } from '../../core/db/sqlite-errors.js';
import { type Entitlement, tierAtLeast } from '../../core/tiers.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { UniqueName } from '../../core/unique-name.js';
import type { UserProfileRow, UserRow, UsersRepository, UserViewRow } from './repository.js';
import type { CreateUserBody, UpdateUserBody, UserView } from './schemas.js';

/** Below ENTERPRISE only the built-in group everyone is shown (spec: groups are an ENTERPRISE feature). */
export function toUserView(row: UserProfileRow, entitlement: Entitlement): UserView {
  return {
    id: row.id,
    username: row.username,
    email: row.email,
    role: row.role,
    groups: tierAtLeast(entitlement.tier(), 'ENTERPRISE') ? (JSON.parse(row.groups) as string[]) : ['everyone'],
    auth_source: row.auth_source,
    totp_enabled: Boolean(row.totp_enabled),
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
  };
}

/** A user made at their first sign-in through an identity provider; in `everyone` only, until their link joins them to more. */
interface ExternalUser {
  usernameBase: string;
  email: string | null;
  role: Role;
}

/** How often a first sign-in looks for a free username again after another sign-in took the one it found. */
const EXTERNAL_NAME_ATTEMPTS = 10;

interface UsersServiceOptions {
  /** AUTH_REQUIRE_EMAIL: local users must have a non-empty email. */
  requireEmail: boolean;
}

/** What a plugin registered after users learns of their changes (the sessions plugin: its cache and sessions). */
export interface UserChangeListener {
  /** After any change to a user (role, email, password, deletion): cached identities must be dropped. */
  userChanged(userId: string): void;
  /** After a user's password changed, so their other sessions end. */
  passwordChanged(userId: string): Promise<void>;
}

/** The rules of user management; SQL stays in the repository, HTTP in the routes. */
export class UsersService {
  private readonly listeners: UserChangeListener[] = [];

  /** Usernames are unique in any case (the table's index on lower(username)); a request that raced another gets the same 409. */
  private readonly usernames: UniqueName;

  constructor(private readonly repository: UsersRepository, private readonly options: UsersServiceOptions) {
    this.usernames = new UniqueName((name) => repository.findByUsername(name), () => conflict('username_taken', 'A user with this username already exists', 'body.username'));
  }

  onChange(listener: UserChangeListener): void {
    this.listeners.push(listener);
  }

  /** The user, or undefined: a handoff or a reset link that names nobody any more. */
  find(id: string): Promise<UserViewRow | undefined> {
    return this.repository.findById(id);
  }

  /** By username, in any case; undefined when none (a sign-in answers the same either way). */
  findByUsername(username: string): Promise<UserRow | undefined> {
    return this.repository.findByUsername(username);
  }

  /** Emails are not unique: every account of the address. */
  listByEmail(email: string): Promise<UserRow[]> {
    return this.repository.listByEmail(email);
  }

  /** Tokens issued before `instant` are refused from now on: every session of the user ends. */
  async refuseTokensBefore(id: string, instant: number): Promise<void> {
    await this.repository.setTokensValidAfter(id, instant);
  }

  /**
   * A user an identity provider vouches for, made at their first sign-in: no password, and the
   * provider's name for them made unique (base, base-2, base-3, ...: usernames are unique in any case). Two first
   * sign-ins at once may find the same free name: the UNIQUE index refuses the second, which takes the next one.
   * `link` then ties the user to what vouched for them (their claim groups, the OIDC identity); when it throws, the user is removed again
   * and the error passed on, so a sign-in that lost the identity to another one at the same moment leaves no user.
   */
  async createExternal(input: ExternalUser, link?: (id: string) => Promise<void>): Promise<string> {
    const id = randomUUID();
    await this.insertExternal(id, input);
    try {
      await link?.(id);
    } catch (error) {
      await this.repository.deleteKeepingAnAdmin(id);
      throw error;
    }
    return id;
  }

  private async insertExternal(id: string, input: ExternalUser): Promise<void> {
    const now = clock.now();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.repository.insert({
          id,
          username: await this.freeUsername(input.usernameBase),
          email: input.email,
          role: input.role,
          hashed_password: null,
          groups: JSON.stringify(['everyone']),
          auth_source: 'oidc',
          tokens_valid_after: 0,
          created_at: now,
          updated_at: now,
        });
        return;
      } catch (error) {
        // Another first sign-in took the free name between the look-up and the insert: take the next one.
        if (!isUniqueViolation(error) || attempt === EXTERNAL_NAME_ATTEMPTS) throw error;
      }
    }
  }

  private async freeUsername(base: string): Promise<string> {
    for (let n = 1; n < 1000; n++) {
      const candidate = n === 1 ? base : `${base}-${n}`;
      if (!(await this.repository.findByUsername(candidate))) return candidate;
    }
    return `${base}-${randomBytes(4).toString('hex')}`;
  }

  async get(id: string): Promise<UserViewRow> {
    const user = await this.repository.findById(id);
    if (!user) throw notFound('User');
    return user;
  }

  async getByUsername(username: string): Promise<UserRow> {
    const user = await this.repository.findByUsername(username);
    if (!user) throw notFound('User');
    return user;
  }

  async list(limit: number, offset: number): Promise<{ users: UserViewRow[]; total: number }> {
    const [users, total] = await Promise.all([this.repository.list(limit, offset), this.repository.count()]);
    return { users, total };
  }

  async create(input: CreateUserBody): Promise<UserViewRow> {
    this.assertEmail(input.email ?? null, 'body.email');
    assertPasswordPolicy(input.password, input.username);
    await this.usernames.assertFree(input.username);
    const now = clock.now();
    const id = randomUUID();
    const hashed = await hashPassword(input.password);
    await this.usernames.write(this.repository.insert({
      id,
      username: input.username,
      email: input.email ?? null,
      role: input.role,
      hashed_password: hashed,
      groups: JSON.stringify(['everyone']),
      auth_source: 'local',
      tokens_valid_after: 0,
      created_at: now,
      updated_at: now,
    }));
    return this.get(id);
  }

  async update(id: string, input: UpdateUserBody): Promise<UserViewRow> {
    const user = await this.get(id);
    const email = input.email === undefined ? user.email : input.email;
    if (user.auth_source === 'local') this.assertEmail(email, 'body.email');
    if (input.password !== undefined) {
      if (user.auth_source !== 'local') throw badRequest('oidc_user', 'This user signs in through an identity provider and has no password', 'body.password');
      assertPasswordPolicy(input.password, user.username);
    }
    const outcome = await this.repository.updateKeepingAnAdmin(id, {
      ...(input.role ? { role: input.role } : {}),
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.password !== undefined ? { hashed_password: await hashPassword(input.password) } : {}),
      updated_at: clock.now(),
    });
    if (outcome === 'last_admin') throw conflict('last_admin', 'The last admin cannot be demoted', 'body.role');
    for (const listener of this.listeners) listener.userChanged(id);
    if (input.password !== undefined) for (const listener of this.listeners) await listener.passwordChanged(id);
    return this.get(id);
  }

  async setOwnEmail(id: string, email: string): Promise<UserViewRow> {
    return this.update(id, { email });
  }

  /** Sets a new password after the caller proved the current one. */
  async setPassword(id: string, newPassword: string): Promise<void> {
    await this.update(id, { password: newPassword });
  }

  async delete(id: string): Promise<UserViewRow> {
    const user = await this.get(id);
    const outcome = await this.repository.deleteKeepingAnAdmin(id);
    if (outcome === 'last_admin') throw conflict('last_admin', 'The last admin cannot be deleted');
    if (outcome === 'not_found') throw notFound('User');
    for (const listener of this.listeners) listener.userChanged(id);
    return user;
  }

  /** First boot: creates the default admin when there is no user at all. */
  async ensureDefaultAdmin(admin: { username: string; password: string; email: string | undefined }): Promise<boolean> {
    if ((await this.repository.count()) > 0) return false;
    const now = clock.now();
    await this.repository.insert({
      id: randomUUID(),
      username: admin.username,
      email: admin.email ?? null,
      role: 'admin' satisfies Role,
      hashed_password: await hashPassword(admin.password),
      groups: JSON.stringify(['everyone']),
      auth_source: 'local',
      tokens_valid_after: 0,
      created_at: now,
      updated_at: now,
    });
    return true;
  }

  private assertEmail(email: string | null, field: string): void {
    if (this.options.requireEmail && !email?.trim()) {
      throw badRequest('email_required', 'An email address is required for local users (AUTH_REQUIRE_EMAIL)', field);
    }
  }
}
