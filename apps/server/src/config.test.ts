import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('has working defaults for the embedded start', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8080);
    expect(config.mqttPort).toBe(1884);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.sessionTtlMs).toBe(8 * 3600_000);
    expect(config.allowedEmailDomains).toHaveLength(2);
    expect(config.trustProxy).toBe(false);
  });

  it('reads durations and lists', () => {
    const config = loadConfig({
      SESSION_TTL: '6s',
      LOGIN_THROTTLE_WINDOW: '2m',
      ALLOWED_EMAIL_DOMAINS: 'a.com, B.in',
    });
    expect(config.sessionTtlMs).toBe(6000);
    expect(config.loginThrottleWindowMs).toBe(120_000);
    expect(config.allowedEmailDomains).toEqual(['a.com', 'b.in']);
  });

  it('gives one clear message per bad value, naming the variable and the value', () => {
    const found = problems({
      PORT: 'eighty',
      SESSION_TTL: 'forever',
      DATABASE_URL: 'mysql://x',
      ENVELOPE_KEY: 'c2hvcnQ=',
      TRUST_PROXY: 'maybe',
      ALLOWED_EMAIL_DOMAINS: 'not a domain',
    });
    expect(found).toHaveLength(6);
    expect(found).toContain('PORT must be a whole number (got "eighty")');
    expect(found).toContain('SESSION_TTL must be a duration like 8h, 30m, 45s or 1500ms (got "forever")');
    expect(found.find((p) => p.startsWith('DATABASE_URL'))).toMatch(/postgres:\/\//);
    expect(found.find((p) => p.startsWith('ENVELOPE_KEY'))).toBe(
      'ENVELOPE_KEY must be 32 bytes written as base64',
    );
    expect(found.find((p) => p.startsWith('TRUST_PROXY'))).toMatch(/false, true, a number of proxy hops/);
    expect(found.find((p) => p.startsWith('ALLOWED_EMAIL_DOMAINS'))).toMatch(/comma-separated/);
  });

  it('never echoes a secret in its message', () => {
    const found = problems({ BOOTSTRAP_SUPERADMIN_PASSWORD: 'short', ENVELOPE_KEY: 'sekrit' });
    expect(found.join('\n')).not.toContain('short"');
    expect(found.join('\n')).not.toContain('sekrit');
  });

  it('reads the attestation app settings, and refuses require without them', () => {
    const digest = `${'AB:'.repeat(31)}AB`;
    const config = loadConfig({
      DEVICE_ATTESTATION: 'require',
      ATTESTATION_PACKAGE_NAME: 'com.example.agent',
      ATTESTATION_SIGNATURE_DIGESTS: `${digest}, ${'c'.repeat(64)}`,
      ATTESTATION_STATUS_FILE: 'status.json',
    });
    expect(config.attestationSignatureDigests).toEqual(['ab'.repeat(32), 'c'.repeat(64)]);
    expect(config.attestationStatusFile).toMatch(/^\/.*status\.json$/);
    expect(
      problems({ DEVICE_ATTESTATION: 'require', ATTESTATION_PACKAGE_NAME: 'com.example.agent' }),
    ).toEqual([
      expect.stringMatching(
        /^DEVICE_ATTESTATION=require needs ATTESTATION_PACKAGE_NAME and ATTESTATION_SIGNATURE_DIGESTS/,
      ),
    ]);
    expect(problems({ ATTESTATION_PACKAGE_NAME: 'agent', ATTESTATION_SIGNATURE_DIGESTS: 'abc' })).toEqual([
      'ATTESTATION_PACKAGE_NAME must be an Android package name like com.example.agent (got "agent")',
      expect.stringMatching(/^ATTESTATION_SIGNATURE_DIGESTS must be SHA-256 digests .* \(got "abc"\)$/),
    ]);
  });
});
