import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config';
import { openSecret, sealSecret } from './secret';

describe('TOTP secrets at rest', () => {
  const key = randomBytes(32);
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

  it('seals a secret that only the same key, for the same account, opens', () => {
    const sealed = sealSecret(key, 7, secret);
    expect(sealed).not.toContain(secret);
    expect(sealSecret(key, 7, secret)).not.toBe(sealed); // a fresh IV each time
    expect(openSecret(key, 7, sealed)).toBe(secret);
    // Copied onto another account's row, or read with another key: nothing.
    expect(openSecret(key, 8, sealed)).toBeNull();
    expect(openSecret(randomBytes(32), 7, sealed)).toBeNull();
  });

  it('opens nothing from a damaged value', () => {
    const sealed = sealSecret(key, 7, secret);
    const bytes = Buffer.from(sealed.slice(3), 'base64');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    for (const value of [`v1:${bytes.toString('base64')}`, 'v1:', 'v2:abc', '', 'plain']) {
      expect(openSecret(key, 7, value)).toBeNull();
    }
  });
});

describe('MFA configuration', () => {
  it('requires a second factor of ADMIN and SUPERADMIN by default; none turns it off', () => {
    expect(loadConfig({}).mfaRequiredLevels).toEqual(['ADMIN', 'SUPERADMIN']);
    expect(loadConfig({ MFA_REQUIRED_LEVELS: 'none' }).mfaRequiredLevels).toEqual([]);
    expect(loadConfig({ MFA_REQUIRED_LEVELS: ' superadmin , USER,user' }).mfaRequiredLevels).toEqual([
      'SUPERADMIN',
      'USER',
    ]);
  });

  it('refuses an unknown level, and a key that is not 32 bytes without echoing it', () => {
    expect(() => loadConfig({ MFA_REQUIRED_LEVELS: 'ADMIN,ROOT' })).toThrow(
      'MFA_REQUIRED_LEVELS must be none or a comma-separated list of USER, ADMIN, SUPERADMIN (got "ADMIN,ROOT")',
    );
    try {
      loadConfig({ MFA_SECRET_KEY: 'c2hvcnQta2V5' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual(['MFA_SECRET_KEY must be 32 bytes written as base64']);
    }
  });
});
