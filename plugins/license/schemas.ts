import { type Static, Type } from 'typebox';
import { StringEnum } from '../../core/schemas.js';
import { TIERS } from '../../core/tiers.js';

/** Generous for a signed JSON document, small enough that nobody stores a blob here. */
const LICENSE_KEY_MAX_LENGTH = 16 * 1024;

export const ApplyLicenseBody = Type.Object(
  { license_key: Type.String({ maxLength: LICENSE_KEY_MAX_LENGTH, description: 'The contents of the licence file' }) },
  { additionalProperties: false },
);
export type ApplyLicenseBody = Static<typeof ApplyLicenseBody>;

const Bytes = Type.Integer({ minimum: 0 });

export const LicenseView = Type.Object(
  {
    tier: StringEnum(TIERS, { description: 'The tier in force; FREE when no licence applies or it has expired' }),
    licensee: Type.Union([Type.String(), Type.Null()]),
    licence_id: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    expired: Type.Boolean({ description: 'A licence was applied but has expired, so the tier fell back to FREE' }),
    limits: Type.Object({ documents: Type.Integer(), file_size_bytes: Bytes, storage_bytes: Bytes }),
    usage: Type.Object({ documents: Type.Integer({ minimum: 0 }), storage_bytes: Bytes }),
  },
  { $id: 'License' },
);
export type LicenseView = Static<typeof LicenseView>;
