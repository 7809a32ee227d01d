/**
 * The attestation revocation status list: Google's format read from ATTESTATION_STATUS_FILE (again when
 * the file changes), and `npm run cli -- attestation-status refresh` run as the operator runs it, from a
 * file (the tests have no network).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { attestationChecks, parseRevocationList } from '../src/modules/devices/attestation-status';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

/** An excerpt of Google's list in its own shape. */
const GOOGLE_LIST = JSON.stringify({
  entries: {
    '2c8cdddfd5e03bfc': { status: 'REVOKED', expires: '2020-11-13', reason: 'KEY_COMPROMISE', comment: 'x' },
    c8966fcb2fbb0d7a: { status: 'SUSPENDED', reason: 'SOFTWARE_FLAW' },
    '0A1B': { status: 'REVOKED' },
  },
});

function cli(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: serverDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('the attestation status list', () => {
  it("reads Google's format: serials as lowercase hex without leading zeros, each status and reason", () => {
    const list = parseRevocationList(GOOGLE_LIST);
    expect([...list.keys()]).toEqual(['2c8cdddfd5e03bfc', 'c8966fcb2fbb0d7a', 'a1b']);
    expect(list.get('2c8cdddfd5e03bfc')).toEqual({ status: 'REVOKED', reason: 'KEY_COMPROMISE' });
    expect(list.get('a1b')).toEqual({ status: 'REVOKED' });
  });

  it('refuses what is not the format, with a clear message', () => {
    expect(() => parseRevocationList('<html>')).toThrow('The attestation status list is not JSON.');
    expect(() => parseRevocationList('{"items": []}')).toThrow(
      'The attestation status list has no "entries" object.',
    );
    expect(() => parseRevocationList('{"entries": {"zz": {"status": "REVOKED"}}}')).toThrow(
      `The attestation status list's entry "zz" is not in Google's format.`,
    );
  });

  it('is read again when the file changes; a missing or broken file is a problem, never an empty list', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'lendlock-status-')), 'status.json');
    const checks = attestationChecks({ packageName: null, signatureDigests: [], statusFile: file });
    expect(checks().revocations).toEqual({ problem: expect.stringMatching(/could not be read/) });
    writeFileSync(file, '{"entries": {}}');
    expect(checks().revocations).toEqual({ entries: new Map() });
    writeFileSync(file, GOOGLE_LIST);
    expect(checks().revocations).toMatchObject({ entries: expect.any(Map) });
    expect((checks().revocations as { entries: Map<string, unknown> }).entries.size).toBe(3);
    writeFileSync(file, '{"entries": ');
    expect(checks().revocations).toEqual({
      problem: 'The attestation status list is not JSON. Revocation cannot be ruled out.',
    });
    expect(
      attestationChecks({ packageName: null, signatureDigests: [], statusFile: null })().revocations,
    ).toBeNull();
  });

  it('`attestation-status refresh --from <file>` replaces the list; a broken source leaves it unchanged', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lendlock-status-cli-'));
    const target = join(dir, 'status.json');
    const source = join(dir, 'downloaded.json');
    writeFileSync(source, GOOGLE_LIST);
    const env = { DATA_DIR: dir, ATTESTATION_STATUS_FILE: target };
    const done = cli(['attestation-status', 'refresh', '--from', source], env);
    expect(done.stderr).toBe('');
    expect(done.stdout.trim()).toBe(`Attestation status list written to ${target}: 3 entries.`);
    expect(done.status).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe(GOOGLE_LIST);

    writeFileSync(source, '{"entries": "truncated');
    const broken = cli(['attestation-status', 'refresh', '--from', source], env);
    expect(broken.status).toBe(1);
    expect(broken.stderr).toContain(
      `Attestation status list not refreshed (${target} unchanged): The attestation status list is not JSON.`,
    );
    expect(readFileSync(target, 'utf8')).toBe(GOOGLE_LIST);

    const nowhere = cli(['attestation-status', 'refresh', '--from', source], { DATA_DIR: dir });
    expect(nowhere.status).toBe(2);
    expect(nowhere.stderr).toContain('Set ATTESTATION_STATUS_FILE or give --to.');
  });
});
