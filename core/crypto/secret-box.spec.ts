import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from './secret-box.js';

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('round-trips and never stores the plaintext', () => {
    const sealed = box.seal('JBSWY3DPEHPK3PXP', 'totp:user-1');
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(sealed.startsWith('v1.')).toBe(true);
    expect(box.open(sealed, 'totp:user-1')).toBe('JBSWY3DPEHPK3PXP');
    expect(box.seal('same', 'c')).not.toBe(box.seal('same', 'c'));
  });

  it('refuses tampering, another context and another key', () => {
    const sealed = box.seal('secret', 'totp:user-1');
    const [v, iv, tag, ct] = sealed.split('.');
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0] ^= 1;
    expect(() => box.open([v, iv, tag, flipped.toString('base64url')].join('.'), 'totp:user-1')).toThrow();
    expect(() => box.open(sealed, 'totp:user-2')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'totp:user-1')).toThrow();
    expect(() => box.open('garbage', 'totp:user-1')).toThrow();
  });
});
