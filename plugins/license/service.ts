import type { KeyObject } from 'node:crypto';
import { clock } from '../../core/clock.js';
import { badRequest, type HttpError, unprocessable } from '../../core/errors.js';
import type { Entitlement, License } from '../../core/tiers.js';
import { checkLicenseKey, type LicenseKeyProblem, verifyLicenseKey } from './license-key.js';
import type { LicensesRepository } from './repository.js';
import type { LicenseView } from './schemas.js';
import type { UsageRegistry } from './usage.js';

const FIELD = 'body.license_key';

function rejection(problem: LicenseKeyProblem, detail: string): HttpError {
  switch (problem) {
    case 'malformed':
      return badRequest('license_malformed', `The licence key is malformed: ${detail}`, FIELD);
    case 'no_public_key':
      return unprocessable('license_no_public_key', 'No licence public key is configured: set LICENSE_PUBLIC_KEYS and restart', FIELD);
    case 'signature_invalid':
      return unprocessable('license_signature_invalid', 'The licence signature is not valid for this installation', FIELD);
    case 'expired':
      return unprocessable('license_expired', `The licence has expired: ${detail}`, FIELD);
  }
}

type RestoreOutcome = { kind: 'none' } | { kind: 'restored'; license: License } | { kind: 'ignored'; problem: LicenseKeyProblem; detail: string };

/** The rules of licensing: verify, persist, and hand the result to the one Entitlement. */
export class LicenseService {
  /** Applies run one after another, so the stored latest row and the entitlement in memory always agree. */
  private applying: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repository: LicensesRepository,
    private readonly entitlement: Entitlement,
    private readonly publicKeys: readonly KeyObject[],
    private readonly usage: UsageRegistry,
  ) {}

  async view(): Promise<LicenseView> {
    const applied = this.entitlement.applied();
    return {
      tier: this.entitlement.tier(),
      licensee: applied?.licensee ?? null,
      licence_id: applied?.id ?? null,
      expires_at: applied?.expires_at ?? null,
      expired: !!applied && !this.entitlement.active(),
      limits: { ...this.entitlement.limits() },
      usage: await this.usage.total(),
    };
  }

  /** Verifies a pasted key and, only if it passes, stores it and puts it in force at once. */
  apply(licenseKey: string, appliedBy: string | null): Promise<License> {
    const run = this.applying.then(async () => {
      const result = checkLicenseKey(licenseKey, this.publicKeys, clock.now());
      if (!result.ok) throw rejection(result.problem, result.detail);
      await this.repository.insert({ licence_key: licenseKey.trim(), applied_at: clock.now(), applied_by: appliedBy });
      this.entitlement.apply(result.license);
      return result.license;
    });
    this.applying = run.catch(() => undefined);
    return run;
  }

  /** At boot: the last stored license, verified again against the keys configured now. Expired ones still apply (they explain the fallback). */
  async restore(): Promise<RestoreOutcome> {
    const row = await this.repository.latest();
    if (!row) return { kind: 'none' };
    const result = verifyLicenseKey(row.licence_key, this.publicKeys);
    if (!result.ok) return { kind: 'ignored', problem: result.problem, detail: result.detail };
    this.entitlement.apply(result.license);
    return { kind: 'restored', license: result.license };
  }
}
