import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { TIERS, type Tier } from '../core/tiers.js';
import { generateLicenseKeyPair, issueLicense, type LicensePayload } from '../plugins/license/license-key.js';

const USAGE = `Hearth license issuing (run by the vendor, never on a customer box)

  issue-license --generate-keypair DIR
      Writes DIR/private.pem (mode 0600) and DIR/public.pem, and prints the value for LICENSE_PUBLIC_KEYS.

  issue-license --private-key FILE --licensee NAME --tier FREE|PRO|ENTERPRISE --days N
                [--documents N --file-size-bytes N --storage-bytes N] [--id ID] [--out FILE]
      Prints the license key, or writes it to FILE. ENTERPRISE needs all three limits; other tiers use the plan limits.
`;

const DAY_MS = 24 * 60 * 60 * 1000;

class UsageError extends Error {}

function positiveInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} must be a positive integer, got "${value}"`);
  }
  return Number(value);
}

function generateKeypair(dir: string, out: (line: string) => void): void {
  mkdirSync(dir, { recursive: true });
  const pair = generateLicenseKeyPair();
  // 'wx': never overwrite an existing signing key, which would orphan every license issued with it.
  writeFileSync(path.join(dir, 'private.pem'), pair.privateKeyPem, { mode: 0o600, flag: 'wx' });
  writeFileSync(path.join(dir, 'public.pem'), pair.publicKeyPem, { mode: 0o644, flag: 'wx' });
  out(`Wrote ${path.join(dir, 'private.pem')} (keep it secret) and ${path.join(dir, 'public.pem')}.`);
  out('Set this on the appliance (comma-separate several keys to rotate):');
  out(`LICENSE_PUBLIC_KEYS=${pair.publicKeyBase64}`);
}

type Values = Record<string, string | boolean | undefined>;

function payloadOf(values: Values, now: number): LicensePayload {
  const tier = String(values.tier ?? '').toUpperCase() as Tier;
  if (!TIERS.includes(tier)) throw new UsageError(`--tier must be one of ${TIERS.join(', ')}`);
  if (!values.licensee) throw new UsageError('--licensee is required');
  const days = positiveInteger('days', values.days as string | undefined);
  if (!days) throw new UsageError('--days is required');
  const limits = {
    documents: positiveInteger('documents', values.documents as string | undefined),
    file_size_bytes: positiveInteger('file-size-bytes', values['file-size-bytes'] as string | undefined),
    storage_bytes: positiveInteger('storage-bytes', values['storage-bytes'] as string | undefined),
  };
  const payload: LicensePayload = {
    id: (values.id as string | undefined) ?? randomUUID(),
    licensee: String(values.licensee),
    tier,
    issued_at: new Date(now).toISOString(),
    expires_at: new Date(now + days * DAY_MS).toISOString(),
  };
  if (tier !== 'ENTERPRISE') return payload;
  if (!limits.documents || !limits.file_size_bytes || !limits.storage_bytes) {
    throw new UsageError('ENTERPRISE needs --documents, --file-size-bytes and --storage-bytes');
  }
  return { ...payload, limits: { documents: limits.documents, file_size_bytes: limits.file_size_bytes, storage_bytes: limits.storage_bytes } };
}

/** The CLI; returns the exit code so that it can be driven without a process. */
function main(argv: string[], out = (line: string) => console.log(line), err = (line: string) => console.error(line)): number {
  try {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        'generate-keypair': { type: 'string' },
        'private-key': { type: 'string' },
        licensee: { type: 'string' },
        tier: { type: 'string' },
        days: { type: 'string' },
        documents: { type: 'string' },
        'file-size-bytes': { type: 'string' },
        'storage-bytes': { type: 'string' },
        id: { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      out(USAGE);
      return 0;
    }
    if (values['generate-keypair']) {
      generateKeypair(values['generate-keypair'], out);
      return 0;
    }
    if (!values['private-key']) throw new UsageError('--private-key or --generate-keypair is required');
    const payload = payloadOf(values, Date.now());
    const key = issueLicense(readFileSync(values['private-key'], 'utf8'), payload);
    if (values.out) {
      writeFileSync(values.out, `${key}\n`, { mode: 0o644 });
      err(`Wrote licence ${payload.id} for ${payload.licensee} (${payload.tier}, expires ${payload.expires_at}) to ${values.out}`);
    } else {
      out(key);
    }
    return 0;
  } catch (error) {
    err(`issue-license: ${(error as Error).message}`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(USAGE);
      return 2;
    }
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
