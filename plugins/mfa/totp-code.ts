import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { clock } from '../../core/clock.js';

const PERIOD_SECONDS = 30;
/** One step either side, for phones whose clock drifts a little. */
const TOLERANCE_SECONDS = PERIOD_SECONDS;
const ISSUER = 'Hearth';

export function newTotpSecret(): string {
  return generateSecret();
}

/** The otpauth URI an authenticator app scans, drawn as an SVG QR code. */
export function totpQrCode(secret: string, accountName: string): Promise<string> {
  const uri = generateURI({ issuer: ISSUER, label: accountName, secret, digits: 6, period: PERIOD_SECONDS });
  return QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M' });
}

/** The time step the code belongs to, or null when it is wrong or its step is not after `afterStep` (a replay). */
export async function totpCodeStep(secret: string, code: string, afterStep: number | null): Promise<number | null> {
  const result = await verify({
    secret,
    token: code,
    digits: 6,
    period: PERIOD_SECONDS,
    epoch: clock.nowSeconds(),
    epochTolerance: TOLERANCE_SECONDS,
    ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
  });
  // otplib types TOTP and HOTP results as one union; only a TOTP match carries timeStep.
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}
