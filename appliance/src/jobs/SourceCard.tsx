import type { ComponentChildren } from 'preact';
import type { Job } from '../api/types';
import { isFinished } from './api';
import { LastRun } from './LastRun';

interface Props {
  name: string;
  enabled: boolean;
  /** Its facts, as <dt>/<dd> pairs. */
  children: ComponentChildren;
  /** Its latest run, when the service still holds it. */
  job?: Job;
  lastAt: string | null;
  /** "scan" or "sync". */
  noun: string;
  /** Editors start runs; admins edit and delete. */
  canRun: boolean;
  canManage: boolean;
  onRun: () => void;
  onEdit: () => void;
  onDelete: () => void;
  /** ENTERPRISE, editors: set the groups allowed to read its documents. */
  onAccess?: () => void;
}

const capitalised = (word: string) => `${word[0].toUpperCase()}${word.slice(1)}`;

/** One source of documents that runs as jobs (a connector, a website): its facts, its run, and what this role may do. */
export function SourceCard({ name, enabled, children, job, lastAt, noun, canRun, canManage, onRun, onEdit, onDelete, onAccess }: Props) {
  const running = !!job && !isFinished(job);
  return (
    <li class="card">
      <div class="card-head">
        <h2 class="card-title">{name}</h2>
        {!enabled && <span class="badge">Disabled</span>}
      </div>
      <dl class="facts">{children}</dl>
      <LastRun job={job} lastAt={lastAt} noun={noun} subject={name} />
      {(canRun || canManage || onAccess) && (
        <div class="actions">
          {canRun && (
            <button type="button" class="button-primary button-small" disabled={!enabled || running} onClick={onRun}>
              {running ? `${capitalised(noun)} running…` : `${capitalised(noun)} now`}
              <span class="visually-hidden"> {name}</span>
            </button>
          )}
          {onAccess && (
            <button type="button" class="button-secondary button-small" onClick={onAccess} aria-label={`Access to ${name}`}>
              Access
            </button>
          )}
          {canManage && (
            <>
              <button type="button" class="button-secondary button-small" onClick={onEdit} aria-label={`Edit ${name}`}>
                Edit
              </button>
              <button type="button" class="button-danger button-small" onClick={onDelete} aria-label={`Delete ${name}`}>
                Delete
              </button>
            </>
          )}
        </div>
      )}
    </li>
  );
}
