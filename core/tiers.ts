import { clock } from './clock.js';

export const TIERS = ['FREE', 'PRO', 'ENTERPRISE'] as const;
export type Tier = (typeof TIERS)[number];

export interface PlanLimits {
  documents: number;
  file_size_bytes: number;
  storage_bytes: number;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

/** The plan limits, named in one place. ENTERPRISE takes its numbers from the licence. */
export const PLAN_LIMITS: Record<Exclude<Tier, 'ENTERPRISE'>, PlanLimits> & { ENTERPRISE: PlanLimits } = {
  FREE: { documents: 500, file_size_bytes: 25 * MB, storage_bytes: 2 * GB },
  PRO: { documents: 20_000, file_size_bytes: 200 * MB, storage_bytes: 100 * GB },
  /** Used only when an ENTERPRISE licence leaves a limit out. */
  ENTERPRISE: { documents: 1_000_000, file_size_bytes: 2 * GB, storage_bytes: 10_000 * GB },
};

export function tierAtLeast(actual: Tier, required: Tier): boolean {
  return TIERS.indexOf(actual) >= TIERS.indexOf(required);
}

export interface Licence {
  id: string;
  licensee: string;
  tier: Tier;
  limits: PlanLimits;
  issued_at: string;
  expires_at: string;
}

/** What the box is entitled to right now; a licence past its expiry falls back to FREE by itself. */
export class Entitlement {
  private licence: Licence | undefined;

  apply(licence: Licence | undefined): void {
    this.licence = licence;
  }

  active(): Licence | undefined {
    if (!this.licence) return undefined;
    return Date.parse(this.licence.expires_at) > clock.now() ? this.licence : undefined;
  }

  /** The last applied licence even when expired, to tell the admin why the tier fell back. */
  applied(): Licence | undefined {
    return this.licence;
  }

  tier(): Tier {
    return this.active()?.tier ?? 'FREE';
  }

  limits(): PlanLimits {
    const licence = this.active();
    if (!licence) return PLAN_LIMITS.FREE;
    return licence.tier === 'ENTERPRISE' ? licence.limits : PLAN_LIMITS[licence.tier];
  }
}
