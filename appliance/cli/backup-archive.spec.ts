import { describe, expect, it } from 'vitest';
import { openWithPassphrase, sealWithPassphrase } from './backup-archive.js';

describe('secrets in a backup (scrypt + AES-256-GCM)', () => {
  it('open with the passphrase, and only with it', () => {
    const sealed = sealWithPassphrase('{"jwt_secret_key":"k"}', 'a long passphrase');
    expect(sealed).not.toContain('jwt_secret_key');
    expect(openWithPassphrase(sealed, 'a long passphrase')).toBe('{"jwt_secret_key":"k"}');
    expect(() => openWithPassphrase(sealed, 'another passphrase')).toThrow('the passphrase does not open');
  });

  it('refuse a ciphertext changed by one byte', () => {
    const box = JSON.parse(sealWithPassphrase('secret', 'a long passphrase'));
    const bytes = Buffer.from(box.ciphertext, 'base64');
    bytes[0] ^= 1;
    expect(() => openWithPassphrase(JSON.stringify({ ...box, ciphertext: bytes.toString('base64') }), 'a long passphrase')).toThrow('the passphrase does not open');
  });

  it('never reuse a salt or an IV', () => {
    const a = JSON.parse(sealWithPassphrase('same', 'same passphrase'));
    const b = JSON.parse(sealWithPassphrase('same', 'same passphrase'));
    expect(a.salt).not.toBe(b.salt);
    expect(a.iv).not.toBe(b.iv);
  });
});
