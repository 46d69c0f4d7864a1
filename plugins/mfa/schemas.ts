import { Type } from 'typebox';

const TotpCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code shown by the authenticator app' });

export const TotpCodeBody = Type.Object({ totp_code: TotpCode }, { additionalProperties: false });

/** The spec's TOTP enrollment result. */
export const EnrolmentView = Type.Object({
  qr_code: Type.String({ description: 'SVG image of the QR code of the otpauth:// URI' }),
  secret: Type.String({ description: 'Raw base32 TOTP secret for manual entry; shown only in this answer' }),
});

export const RecoveryCodesView = Type.Object({
  recovery_codes: Type.Array(Type.String(), { minItems: 10, maxItems: 10, description: 'Single-use codes, shown only in this answer' }),
});

export const MfaLoginBody = Type.Object(
  {
    mfa_token: Type.String({ minLength: 1, maxLength: 256 }),
    totp_code: Type.String({
      pattern: '^([0-9]{6}|[A-Za-z0-9]{5}[- ]?[A-Za-z0-9]{5})$',
      description: 'A 6-digit TOTP code, or a recovery code (XXXXX-XXXXX, case and dash optional)',
    }),
  },
  { additionalProperties: false },
);
