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

/** The plan limits, named in one place. ENTERPRISE takes its numbers from the license. */
export const PLAN_LIMITS: Record<Exclude<Tier, 'ENTERPRISE'>, PlanLimits> & { ENTERPRISE: PlanLimits } = {
  FREE: { documents: 500, file_size_bytes: 25 * MB, storage_bytes: 2 * GB },
  PRO: { documents: 20_000, file_size_bytes: 200 * MB, storage_bytes: 100 * GB },
  /** Used only when an ENTERPRISE license leaves a limit out. */
  ENTERPRISE: { documents: 1_000_000, file_size_bytes: 2 * GB, storage_bytes: 10_000 * GB },
};

export function tierAtLeast(actual: Tier, required: Tier): boolean {
  return TIERS.indexOf(actual) >= TIERS.indexOf(required);
}

export interface License {
  id: string;
  licensee: string;
  tier: Tier;
  limits: PlanLimits;
  issued_at: string;
  expires_at: string;
}

/** What the box is entitled to right now; a license past its expiry falls back to FREE by itself. */
export class Entitlement {
  private license: License | undefined;

  apply(license: License | undefined): void {
    this.license = license;
  }

  active(): License | undefined {
    if (!this.license) return undefined;
    return Date.parse(this.license.expires_at) > clock.now() ? this.license : undefined;
  }

  /** The last applied license even when expired, to tell the admin why the tier fell back. */
  applied(): License | undefined {
    return this.license;
  }

  tier(): Tier {
    return this.active()?.tier ?? 'FREE';
  }

  limits(): PlanLimits {
    const license = this.active();
    if (!license) return PLAN_LIMITS.FREE;
    return license.tier === 'ENTERPRISE' ? license.limits : PLAN_LIMITS[license.tier];
  }
}
