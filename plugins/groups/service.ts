import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../core/auth/guard.js';
import { clock } from '../../core/clock.js';
import { badRequest, conflict, notFound } from '../../core/errors.js';
import { type Entitlement, tierAtLeast } from '../../core/tiers.js';
import { UniqueName } from '../../core/unique-name.js';
import type { AccessSource, Assignment, GroupRow, GroupsRepository } from './repository.js';
import { sharesGroup } from './readable.js';

export const EVERYONE = 'everyone';

export interface GroupView {
  id: string;
  name: string;
  builtin: boolean;
  origin: GroupRow['origin'];
  member_count: number;
  created_at: string;
  updated_at: string;
}

/** After a membership changed: the user's cached identity must be dropped (sessions). */
type MembershipListener = (userId: string) => void;

/**
 * Groups and access rules. `everyone` is built in: every user is in it and it cannot be renamed,
 * deleted or joined by hand. Retrieval asks readerGroups() on every query, so a change of membership
 * or of a document's groups holds from the next query on, with nothing re-embedded.
 */
export class GroupsService {
  private readonly listeners: MembershipListener[] = [];

  /** Group names are unique in any case; a create or rename that raced another to one name gets the same 409. */
  private readonly names: UniqueName;

  constructor(private readonly repository: GroupsRepository, private readonly entitlement: Entitlement) {
    this.names = new UniqueName(async (name) => (await repository.findByNames([name]))[0], () => conflict('group_exists', 'A group with this name already exists', 'body.name'));
  }

  onMembershipChange(listener: MembershipListener): void {
    this.listeners.push(listener);
  }

  /** Below ENTERPRISE only `everyone` is shown anywhere (a user's groups, a document's). */
  visible(groups: string[]): string[] {
    return tierAtLeast(this.entitlement.tier(), 'ENTERPRISE') ? groups : [EVERYONE];
  }

  /** The groups whose documents this user may read, read from the database now (never from a cache); none for an unknown user. */
  async readerGroups(userId: string): Promise<string[]> {
    const groups = await this.repository.memberOf(userId);
    return groups ? [...new Set([EVERYONE, ...groups])] : [];
  }

  /** readerGroups of the signed-in caller of a protected route. */
  callerGroups(request: FastifyRequest): Promise<string[]> {
    return this.readerGroups(principalOf(request).id);
  }

  /**
   * A job as this reader may see it: the documents it names are cut to those they may read, and a job
   * about documents none of which they may read is not theirs to see (undefined); nor is a job about a
   * connector or integration (a scan, a sync, a metadata refresh) outside their groups. A job about a source
   * deleted since stays visible (the source and its documents are gone, and whoever deleted it sees its run
   * stop), as does a refresh of the uploads, which are no source's. The jobs live in memory, so this is
   * the one place where the access test runs after the read.
   */
  async visibleJob<T extends { subject?: Record<string, string | string[]> }>(job: T, groups: string[]): Promise<T | undefined> {
    const source = job.subject?.connector_id ?? job.subject?.integration_id ?? job.subject?.source_id;
    if (typeof source === 'string') {
      // Source ids are random UUIDs: whichever table holds it, it names one source.
      const allowed = (await this.repository.sourceGroups('connectors', source)) ?? (await this.repository.sourceGroups('integrations', source));
      if (allowed && !sharesGroup(allowed, groups)) return undefined;
    }
    const ids = job.subject?.document_ids;
    if (!Array.isArray(ids) || !ids.length) return job;
    const readable = await this.repository.readableDocuments(ids, groups);
    if (!readable.size) return undefined;
    return { ...job, subject: { ...job.subject, document_ids: ids.filter((id) => readable.has(id)) } };
  }

  async list(): Promise<GroupView[]> {
    return (await this.repository.list()).map((row) => toGroupView(row, row.member_count));
  }

  async get(id: string): Promise<GroupView> {
    const group = await this.find(id);
    return toGroupView(group, (await this.repository.members(group.name)).length);
  }

  async create(name: string): Promise<GroupView> {
    const clean = name.trim();
    await this.names.assertFree(clean);
    const row = await this.names.write(this.repository.insert(clean, 'local', clock.now()));
    return toGroupView(row, 0);
  }

  async rename(id: string, name: string): Promise<GroupView> {
    const group = this.mutable(await this.find(id));
    const clean = name.trim();
    await this.names.assertFree(clean, group.id);
    await this.names.write(this.repository.rename(group.name, clean, clock.now()));
    await this.notifyMembers(clean);
    return this.get(id);
  }

  async delete(id: string): Promise<GroupView> {
    const group = this.mutable(await this.find(id));
    // Decided by the delete itself, which checks the group's use in its own transaction: of deletes sent together, one
    // removes the group and the others find none; a document or source given to it alone meanwhile keeps it (409).
    const outcome = await this.repository.delete(group.id);
    if (outcome === 'not_found') throw notFound('Group');
    if ('stranded' in outcome) throw conflict('group_in_use', `${outcome.stranded} document(s) or source(s) are readable by this group alone: give them other groups first`);
    for (const member of outcome.memberIds) this.notify(member);
    return toGroupView(group, 0);
  }

  async members(id: string): Promise<Array<{ id: string; username: string; role: string; auth_source: string }>> {
    return this.repository.members((await this.find(id)).name);
  }

  async addMember(id: string, userId: string): Promise<void> {
    await this.setMembership(id, userId, true);
  }

  async removeMember(id: string, userId: string): Promise<void> {
    await this.setMembership(id, userId, false);
  }

  /**
   * Group names from an identity provider's claim, at a user's first sign-in: missing ones are created (origin oidc)
   * and the user joins them, in one transaction, so that no group deleted or renamed meanwhile is left named by the
   * user; returns the canonical names, `everyone` first.
   */
  async joinClaimGroups(userId: string, names: string[]): Promise<string[]> {
    const wanted = [...new Set(names.map((name) => name.trim()).filter((name) => name && name.length <= 128 && name.toLowerCase() !== EVERYONE))];
    return this.repository.joinClaimGroups(userId, wanted, clock.now());
  }

  /**
   * Sets a document's allowed groups. Only a reader of the document may (an editor outside its groups
   * gets 404, as if it did not exist: else they could grant themselves access). The names are checked in the
   * write's own transaction: a group deleted or renamed meanwhile is an unknown group, as after it.
   */
  async setDocumentGroups(documentId: string, names: string[], reader: string[]): Promise<string[]> {
    const mayChange = (current: string[]) => sharesGroup(current, reader);
    return assigned(await this.repository.setDocumentGroups(documentId, names, mayChange, clock.now()), 'Document');
  }

  /** Sets a source's groups and its documents'; the same rule: only a reader of the source's documents may. */
  async setSourceGroups(source: AccessSource, id: string, names: string[], reader: string[]): Promise<string[]> {
    const mayChange = (current: string[]) => sharesGroup(current, reader);
    return assigned(await this.repository.setSourceGroups(source, id, names, mayChange, clock.now()), sourceWord(source));
  }

  async sourceGroups(source: AccessSource, id: string, reader: string[]): Promise<string[]> {
    const groups = await this.repository.sourceGroups(source, id);
    if (!groups || !sharesGroup(groups, reader)) throw notFound(sourceWord(source));
    return groups;
  }

  private async find(id: string): Promise<GroupRow> {
    const group = await this.repository.find(id);
    if (!group) throw notFound('Group');
    return group;
  }

  private mutable(group: GroupRow): GroupRow {
    if (group.id === EVERYONE) throw conflict('builtin_group', 'The built-in group everyone holds every user and cannot be changed');
    return group;
  }

  /** Decided by the write, which reads the group and the user's groups in its own transaction (a group deleted meanwhile: 404). */
  private async setMembership(id: string, userId: string, join: boolean): Promise<void> {
    const group = this.mutable(await this.find(id));
    const outcome = await this.repository.setMembership(group.id, userId, join);
    if (outcome === 'no_group') throw notFound('Group');
    if (outcome === 'no_user') throw notFound('User');
    this.notify(userId);
  }

  private async notifyMembers(name: string): Promise<void> {
    for (const member of await this.repository.members(name)) this.notify(member.id);
  }

  private notify(userId: string): void {
    for (const listener of this.listeners) listener(userId);
  }
}

const sourceWord = (source: AccessSource) => (source === 'connectors' ? 'Connector' : 'Integration');

/** The groups an access change wrote, or its refusal: 404 for the document or source, 400 unknown_group for names with no group. */
function assigned(outcome: Assignment, what: string): string[] {
  if (outcome === 'not_found') throw notFound(what);
  if ('missing' in outcome) throw badRequest('unknown_group', `No such group: ${outcome.missing.join(', ')}`, 'body.groups');
  return outcome.groups;
}

function toGroupView(row: GroupRow, memberCount: number): GroupView {
  return {
    id: row.id,
    name: row.name,
    builtin: row.id === EVERYONE,
    origin: row.origin,
    member_count: memberCount,
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
  };
}
