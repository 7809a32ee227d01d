/**
 * Device identity (issue: a leaked enrollment secret cannot take over a phone): device keys, proven
 * re-registration, operators' approval, one IMEI per device, key attestation and enrollment secrets,
 * tried the way an attacker holding the enrollment secret would.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type DeviceRegistration, registrationChallenge } from '@lendlock/contract';
import { RegistrationError, type SimulatedDevice } from '@lendlock/device-sim';
import { VerifiedBootState } from '@peculiar/asn1-android';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { refreshRevocationList, serialKey } from '../src/modules/devices/attestation-status';
import { IDENTITY_MESSAGES } from '../src/modules/devices/registration';
import { buildAttestation, createTestIntermediate, createTestRoot, TEST_AGENT } from './attestation-certs';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import {
  type DeviceServer,
  randomProfile,
  simulatedDevice,
  startDeviceServer,
  TEST_ENROLLMENT_SECRET,
} from './devices';
import { buildUser, loginAs } from './factories';

type Json = Record<string, unknown>;

describe.each(databaseKinds())('device identity on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let admin: string;
  let superadmin: string;
  let user: string;
  const devices: SimulatedDevice[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, 'embedded');
    admin = (await loginAs(server.app, await buildUser(database, { userlevel: 'ADMIN' }))).token;
    superadmin = (await loginAs(server.app, await buildUser(database, { userlevel: 'SUPERADMIN' }))).token;
    user = (await loginAs(server.app, await buildUser(database, { permissions: ['deviceDetails'] }))).token;
  });
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
    await server?.close();
    await database?.close();
  });

  const agent = (options: Parameters<typeof simulatedDevice>[1] = {}) => {
    const created = simulatedDevice(server, options);
    devices.push(created);
    return created;
  };
  const post = async (path: string, body: unknown, secret = TEST_ENROLLMENT_SECRET) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-enrollment-secret': secret },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const nonceFor = async (imei1: string) => (await post('/device/v1/nonce', { imei1 })).body.nonce as string;
  const api = (token: string, url: string, payload?: object) =>
    server.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': token },
      ...(payload ? { payload } : {}),
    });
  const deviceRow = (imei1: string) =>
    database.db.selectFrom('devices').selectAll().where('imei1', '=', imei1).executeTakeFirstOrThrow();
  const online = (imei: string, value: boolean) =>
    vi.waitFor(async () => expect((await deviceRow(imei)).online).toBe(value), {
      timeout: 8000,
      interval: 50,
    });
  const auditOf = (imei1: string, action = 'device.register') =>
    database.db
      .selectFrom('audit_log')
      .select(['result', 'details', 'address'])
      .where('target', '=', imei1)
      .where('action', '=', action)
      .orderBy('id')
      .execute();
  /** A registration as an attacker who has only the secret and the victim's IMEIs would send it. */
  const attackerKey = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = (key: ReturnType<typeof attackerKey>) =>
    key.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');

  it('the takeover fails at its first step: the real phone stays online, unchanged and in control', async () => {
    const phone = agent({ profile: { retailer_phone: '9000000001' } });
    await phone.register();
    await phone.connect();
    await online(phone.imei, true);
    const lock = await server.app.ctx.commands.issue({
      imei: phone.imei,
      command: 'LOCK',
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(async () => expect((await deviceRow(phone.imei)).reported_state?.locked).toBe(true));
    await vi.waitFor(async () =>
      expect(
        (
          await server.app.ctx.db
            .selectFrom('commands')
            .select('status')
            .where('transaction_id', '=', lock.transactionId)
            .executeTakeFirstOrThrow()
        ).status,
      ).toBe('EXECUTED'),
    );
    const before = await deviceRow(phone.imei);
    expect(before.public_key).toBe(phone.publicKey);

    // 1. The attacker registers the enrolled IMEI with the leaked secret: on the secret alone …
    const plain = await post('/device/v1/register', {
      ...phone.profile,
      brand: 'Evil',
      retailer_phone: '9999999999',
    });
    expect(plain.status).toBe(409);
    expect(plain.body).toMatchObject({
      code: 'REREGISTRATION_NEEDS_APPROVAL',
      message: IDENTITY_MESSAGES.needsApproval,
    });
    expect(plain.body).not.toHaveProperty('credential');
    // … and with a key of its own, signing a fresh nonce with it.
    const key = attackerKey();
    const nonce = await nonceFor(phone.imei);
    const signed = await post('/device/v1/register', {
      ...phone.profile,
      publicKey: spki(key),
      nonce,
      signature: sign(
        'sha256',
        Buffer.from(registrationChallenge(phone.imei, nonce)),
        key.privateKey,
      ).toString('base64'),
    });
    expect(signed.status).toBe(409);
    expect(signed.body).not.toHaveProperty('credential');

    // Nothing of the device changed: credential, profile, retailer, key, desired state, Match_Status.
    const after = await deviceRow(phone.imei);
    expect(after).toEqual({ ...before, online: after.online, last_seen_at: after.last_seen_at });
    expect(after.online).toBe(true);
    expect(phone.online).toBe(true);
    // The real phone still takes its commands: an UNLOCK reaches it and it alone acknowledges it.
    const unlock = await server.app.ctx.commands.issue({
      imei: phone.imei,
      command: 'UNLOCK',
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(async () => expect(phone.state.locked).toBe(false));
    expect(phone.received.map((m) => m.id)).toEqual([lock.transactionId, unlock.transactionId]);
    // Both attempts are kept for an operator and audited as refused.
    const refusals = (await auditOf(phone.imei)).filter((a) => a.result === 'refused');
    expect(refusals.map((a) => (a.details as Json).reason)).toEqual(['no-proof', 'bad-signature']);
    const requests = await database.db
      .selectFrom('reregistration_requests')
      .selectAll()
      .where('imei1', '=', phone.imei)
      .orderBy('id')
      .execute();
    expect(requests.map((r) => [r.status, r.profile.brand, r.public_key])).toEqual([
      ['PENDING', 'Evil', null],
      ['PENDING', phone.profile.brand, spki(key)],
    ]);
  });

  it('a registration signed by the enrolled key over a fresh nonce is admitted, and the nonce works once', async () => {
    const phone = agent();
    const first = await phone.register();
    expect(phone.lastRegistration).toMatchObject({ registrationstatus: 'REGISTERED', admittedBy: 'first' });
    const second = await phone.register();
    expect(phone.lastRegistration).toMatchObject({
      registrationstatus: 'RE-REGISTERED',
      admittedBy: 'signature',
    });
    expect(second.credential).not.toBe(first.credential);
    await phone.connect();
    await online(phone.imei, true);

    // A nonce is single-use, bound to its IMEI and short-lived.
    const nonce = await nonceFor(phone.imei);
    const body = (n: string, imei = phone.imei) => ({
      ...phone.profile,
      imei1: imei,
      imei2: null,
      nonce: n,
      signature: sign('sha256', Buffer.from(registrationChallenge(imei, n)), phone.deviceKey).toString(
        'base64',
      ),
    });
    expect((await post('/device/v1/register', body(nonce))).status).toBe(200);
    const replay = await post('/device/v1/register', body(nonce));
    expect(replay).toMatchObject({ status: 400, body: { message: IDENTITY_MESSAGES.badNonce } });
    const other = randomProfile();
    const foreign = await nonceFor(other.imei1);
    expect((await post('/device/v1/register', body(foreign))).status).toBe(400);
    const stale = await nonceFor(phone.imei);
    await sql`UPDATE device_nonces SET expires_at = now() - interval '1 second'`.execute(database.db);
    expect((await post('/device/v1/register', body(stale))).status).toBe(400);
    await phone.register();
  });

  it('an operator approves one registration within the window, for the key it claimed; a rejection admits none', async () => {
    const phone = agent();
    await phone.register();
    // The phone is wiped and its agent reinstalled: a new key, which the enrolled one cannot vouch for.
    const reinstalled = agent({ profile: { ...phone.profile, model: 'Galaxy A15 (repaired)' } });
    const refused = await reinstalled.register().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RegistrationError);
    expect((refused as RegistrationError).code).toBe('REREGISTRATION_NEEDS_APPROVAL');

    // Device Details shows the request (to a USER holding deviceDetails too) …
    const shown = await api(user, '/api/v2/deviceIdentity', { imei: phone.imei });
    expect(shown.statusCode).toBe(200);
    const request = (shown.json().requests as Json[])[0] as Json;
    expect(request).toMatchObject({ status: 'PENDING', newKey: true, address: '127.0.0.1', attempts: 1 });
    expect((request.profile as Json).model).toBe('Galaxy A15 (repaired)');
    // … but only an ADMIN or SUPERADMIN decides it.
    const byUser = await api(user, '/api/v2/reregistration/decide', { id: request.id, decision: 'approve' });
    expect(byUser.statusCode).toBe(403);
    expect(
      (
        await database.db
          .selectFrom('reregistration_requests')
          .select('status')
          .where('id', '=', Number(request.id))
          .executeTakeFirstOrThrow()
      ).status,
    ).toBe('PENDING');

    const approved = await api(admin, '/api/v2/reregistration/decide', {
      id: request.id,
      decision: 'approve',
    });
    expect(approved.statusCode).toBe(200);
    expect(approved.json().message).toMatch(new RegExp(`^Registration of ${phone.imei} approved`));
    // An attacker racing the approval with a key of its own is still refused: the approval is for the
    // key the request claimed.
    const key = attackerKey();
    const raced = await post('/device/v1/register', { ...phone.profile, publicKey: spki(key) });
    expect(raced.status).toBe(409);
    // The reinstalled agent registers once …
    await reinstalled.register();
    expect(reinstalled.lastRegistration?.admittedBy).toBe('approval');
    expect((await deviceRow(phone.imei)).public_key).toBe(reinstalled.publicKey);
    // … and the old key no longer proves anything, while the new one does.
    await expect(phone.register()).rejects.toThrow(RegistrationError);
    await reinstalled.register();
    expect(reinstalled.lastRegistration?.admittedBy).toBe('signature');

    // A rejected request admits nothing; an approval past its window neither.
    const third = agent({ profile: phone.profile });
    await expect(third.register()).rejects.toThrow(RegistrationError);
    const pending = (await api(admin, '/api/v2/deviceIdentity', { imei: phone.imei })).json()
      .requests[0] as Json;
    const rejected = await api(superadmin, '/api/v2/reregistration/decide', {
      id: pending.id,
      decision: 'reject',
    });
    expect(rejected.json().message).toBe(`Registration request for ${phone.imei} rejected.`);
    await expect(third.register()).rejects.toThrow(RegistrationError);
    const again = (await api(admin, '/api/v2/deviceIdentity', { imei: phone.imei })).json()
      .requests[0] as Json;
    await api(admin, '/api/v2/reregistration/decide', { id: again.id, decision: 'approve' });
    await sql`UPDATE reregistration_requests SET approved_until = now() - interval '1 second' WHERE id = ${again.id}`.execute(
      database.db,
    );
    await expect(third.register()).rejects.toThrow(RegistrationError);
    // A decided request cannot be decided again.
    const twice = await api(admin, '/api/v2/reregistration/decide', { id: pending.id, decision: 'approve' });
    expect(twice.statusCode).toBe(409);

    const decisions = await database.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('target', '=', phone.imei)
      .where('action', 'like', 'device.reregistration.%')
      .orderBy('id')
      .execute();
    expect(decisions.map((d) => d.action)).toEqual([
      'device.reregistration.approve',
      'device.reregistration.reject',
      'device.reregistration.approve',
    ]);
    const admitted = (await auditOf(phone.imei)).filter((a) => a.result === 'success');
    expect(admitted.map((a) => (a.details as Json).admittedBy)).toEqual(['first', 'approval', 'signature']);
  });

  it('a formatted or released phone registers again on the secret, with a new key', async () => {
    const phone = agent();
    await phone.register();
    await server.app.ctx.commands.issue({
      imei: phone.imei,
      command: 'FORMATTEDDEVICE',
      iface: 'S',
      actor: null,
    });
    const fresh = agent({ profile: phone.profile });
    await fresh.register();
    expect(fresh.lastRegistration?.admittedBy).toBe('formatted');
    await sql`UPDATE devices SET claimstatus = 'RELEASED' WHERE imei1 = ${phone.imei}`.execute(database.db);
    const another = agent({ profile: phone.profile });
    await another.register();
    expect(another.lastRegistration?.admittedBy).toBe('released');
    expect((await deviceRow(phone.imei)).public_key).toBe(another.publicKey);
  });

  it('one IMEI, one device: neither slot of another device can be claimed, and the database says so too', async () => {
    const phone = agent();
    await phone.register();
    const imei2 = phone.profile.imei2 as string;
    const before = await deviceRow(phone.imei);
    const asFirst = await post('/device/v1/register', randomProfile({ imei1: imei2, imei2: null }));
    expect(asFirst).toMatchObject({
      status: 409,
      body: { code: 'IMEI_IN_USE', message: IDENTITY_MESSAGES.imeiInUse(imei2) },
    });
    const asSecond = await post('/device/v1/register', randomProfile({ imei2: phone.imei }));
    expect(asSecond.status).toBe(409);
    expect((await post('/device/v1/register', randomProfile({ imei2 }))).status).toBe(409);
    expect(await deviceRow(phone.imei)).toEqual(before);
    expect((await auditOf(imei2)).map((a) => (a.details as Json).reason)).toEqual(['imei-in-use']);
    // Two phones claiming one second IMEI at the same moment: one wins.
    const shared = randomProfile().imei1;
    const racing = await Promise.all([
      post('/device/v1/register', randomProfile({ imei2: shared })),
      post('/device/v1/register', randomProfile({ imei2: shared })),
    ]);
    expect(racing.map((r) => r.status).sort()).toEqual([200, 409]);
    // The database refuses a second holder whatever writes it.
    await expect(
      sql`INSERT INTO devices (imei1, imei2) VALUES (${randomProfile().imei1}, ${imei2})`.execute(
        database.db,
      ),
    ).rejects.toThrow();
    await expect(sql`INSERT INTO devices (imei1) VALUES (${imei2})`.execute(database.db)).rejects.toThrow();
    expect((await post('/device/v1/register', randomProfile({ imei2: randomProfile().imei1 }))).status).toBe(
      200,
    );
  });

  it('DEVICE_KEY=required refuses an agent without a key; a malformed key is refused', async () => {
    const strict = await startDeviceServer(database, 'embedded', { deviceKey: 'required' });
    try {
      const keyless = simulatedDevice(strict, { keyless: true });
      await expect(keyless.register()).rejects.toThrow(IDENTITY_MESSAGES.keyRequired);
      const keyed = simulatedDevice(strict);
      await keyed.register();
      expect(keyed.lastRegistration?.admittedBy).toBe('first');
    } finally {
      await strict.close();
    }
    const badProfile = randomProfile();
    const bad = await post('/device/v1/register', {
      ...badProfile,
      publicKey: Buffer.from('nope').toString('base64'),
    });
    expect(bad).toMatchObject({ status: 400, body: { message: IDENTITY_MESSAGES.badKey } });
    expect((await auditOf(badProfile.imei1)).map((a) => [a.result, (a.details as Json).reason])).toEqual([
      ['refused', 'device-key'],
    ]);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      format: 'der',
      type: 'spki',
    });
    expect(
      (await post('/device/v1/register', { ...randomProfile(), publicKey: rsa.toString('base64') })).status,
    ).toBe(400);
  });

  it('an older agent without a key enrols as before and needs an approval to register again', async () => {
    const old = agent({ keyless: true });
    await old.register();
    expect((await deviceRow(old.imei)).public_key).toBeNull();
    await expect(old.register()).rejects.toThrow(RegistrationError);
  });

  describe('key attestation', () => {
    let root: Awaited<ReturnType<typeof createTestRoot>>;
    let rootsFile: string;
    beforeAll(async () => {
      root = await createTestRoot();
      rootsFile = join(mkdtempSync(join(tmpdir(), 'lendlock-roots-')), 'roots.pem');
      writeFileSync(rootsFile, root.pem);
    });
    const attestingAgent = (
      target: DeviceServer,
      level: 'Software' | 'TrustedEnvironment' | 'StrongBox',
      trick?: 'challenge',
      phone: Pick<
        Parameters<typeof buildAttestation>[0],
        'rootOfTrust' | 'application' | 'intermediate'
      > = {},
    ) =>
      simulatedDevice(target, {
        attest: async (publicKey, nonce) =>
          (
            await buildAttestation({
              publicKey,
              challenge: Buffer.from(trick === 'challenge' ? `${nonce}x` : nonce),
              securityLevel: level,
              root,
              ...phone,
            })
          ).chain,
      });

    it('records the attested security level and shows it on Device Details', async () => {
      const recording = await startDeviceServer(database, 'embedded', { attestationRoots: rootsFile });
      try {
        const phone = attestingAgent(recording, 'StrongBox');
        await phone.register();
        expect(phone.lastRegistration?.keySecurityLevel).toBe('StrongBox');
        const shown = await recording.app.inject({
          method: 'POST',
          url: '/api/v2/deviceIdentity',
          headers: { 'x-api-key': admin },
          payload: { imei: phone.imei },
        });
        expect(shown.json()).toMatchObject({ hasKey: true, keySecurityLevel: 'StrongBox' });
        // An attestation of another challenge proves nothing: admitted (record), level not recorded, reason audited.
        const replayed = attestingAgent(recording, 'TrustedEnvironment', 'challenge');
        await replayed.register();
        expect(replayed.lastRegistration?.keySecurityLevel).toBeNull();
        const [audit] = await auditOf(replayed.imei);
        expect(audit?.details).toMatchObject({ attestation: expect.any(String) });
      } finally {
        await recording.close();
      }
    });

    it('DEVICE_ATTESTATION=require enrols only attested keys, and Google roots do not vouch for a self-made chain', async () => {
      const requiring = await startDeviceServer(database, 'embedded', {
        attestationRoots: rootsFile,
        deviceAttestation: 'require',
      });
      const google = await startDeviceServer(database, 'embedded', { deviceAttestation: 'require' });
      try {
        const plain = simulatedDevice(requiring);
        const refused = await plain.register().catch((error: unknown) => error as RegistrationError);
        expect(refused).toMatchObject({ status: 403, code: 'ATTESTATION_REQUIRED' });
        const attested = attestingAgent(requiring, 'TrustedEnvironment');
        await attested.register();
        expect(attested.lastRegistration?.keySecurityLevel).toBe('TrustedEnvironment');
        // A proven registration keeps the attested key: no new attestation needed.
        const again = simulatedDevice(requiring, { profile: attested.profile });
        again.deviceKey = attested.deviceKey;
        await again.register();
        expect(again.lastRegistration).toMatchObject({
          admittedBy: 'signature',
          keySecurityLevel: 'TrustedEnvironment',
        });
        const selfMade = attestingAgent(google, 'StrongBox');
        await expect(selfMade.register()).rejects.toMatchObject({ status: 403 });
      } finally {
        await requiring.close();
        await google.close();
      }
    });

    it('DEVICE_ATTESTATION=require refuses an unlocked phone, software keys, another app and revoked keys, each with its reason', async () => {
      const statusFile = join(mkdtempSync(join(tmpdir(), 'lendlock-status-')), 'status.json');
      writeFileSync(statusFile, '{"entries": {}}');
      const intermediate = await createTestIntermediate(root);
      const requiring = await startDeviceServer(database, 'embedded', {
        attestationRoots: rootsFile,
        deviceAttestation: 'require',
        attestationPackageName: TEST_AGENT.packageName,
        attestationSignatureDigests: [TEST_AGENT.signatureDigest],
        attestationStatusFile: statusFile,
      });
      const refusal = async (phone: SimulatedDevice) => {
        const error = await phone.register().catch((e: unknown) => e as RegistrationError);
        expect(error).toBeInstanceOf(RegistrationError);
        const enrolled = await database.db
          .selectFrom('devices')
          .select('imei1')
          .where('imei1', '=', phone.imei)
          .executeTakeFirst();
        expect(enrolled).toBeUndefined(); // nothing enrolled
        const [audit] = await auditOf(phone.imei);
        expect(audit).toMatchObject({ result: 'refused', details: { reason: 'attestation' } });
        return error as RegistrationError;
      };
      try {
        const unlocked = await refusal(
          attestingAgent(requiring, 'TrustedEnvironment', undefined, {
            rootOfTrust: { deviceLocked: false, verifiedBootState: VerifiedBootState.unverified },
          }),
        );
        expect(unlocked).toMatchObject({ status: 403, code: 'ATTESTATION_REQUIRED' });
        expect(unlocked.message).toContain(
          IDENTITY_MESSAGES.attestationRefused(
            "The phone's bootloader is unlocked. The phone's verified boot state is Unverified, not Verified.",
          ),
        );
        const software = await refusal(attestingAgent(requiring, 'Software'));
        expect(software.message).toContain('The key was attested by software (security level Software)');
        const cloner = await refusal(
          attestingAgent(requiring, 'StrongBox', undefined, {
            application: { packageNames: ['com.example.cloner'], signatureDigests: ['b2'.repeat(32)] },
          }),
        );
        expect(cloner.message).toContain(
          `The key was made by com.example.cloner, not by ${TEST_AGENT.packageName}.`,
        );
        expect(cloner.message).toContain('not signed with a configured signing certificate');

        // The batch key is revoked: refused once the list names it, admitted once a refresh drops it.
        const batch = serialKey(intermediate.certificate.serialNumber);
        const revokedList = join(dirname(statusFile), 'google.json');
        writeFileSync(
          revokedList,
          JSON.stringify({ entries: { [batch]: { status: 'REVOKED', reason: 'KEY_COMPROMISE' } } }),
        );
        expect(await refreshRevocationList(revokedList, statusFile)).toBe(1);
        const revoked = await refusal(attestingAgent(requiring, 'StrongBox', undefined, { intermediate }));
        expect(revoked.message).toContain(
          'Certificate 2 of the attestation chain is on the revocation status list (REVOKED, KEY_COMPROMISE).',
        );
        // An unreadable list refuses every chain.
        writeFileSync(statusFile, 'not json');
        const unreadable = await refusal(attestingAgent(requiring, 'StrongBox'));
        expect(unreadable.message).toContain('The attestation status list is not JSON.');
        writeFileSync(statusFile, '{"entries": {}}');
        const genuine = attestingAgent(requiring, 'StrongBox', undefined, { intermediate });
        await genuine.register();
        expect(genuine.lastRegistration?.keySecurityLevel).toBe('StrongBox');
        const shown = await api(admin, '/api/v2/deviceIdentity', { imei: genuine.imei });
        expect(shown.json()).toMatchObject({ attestation: { passed: true, reasons: [] } });
      } finally {
        await requiring.close();
      }
    });

    it('DEVICE_ATTESTATION=record admits an unlocked phone as not attested and shows why on Device Details', async () => {
      const recording = await startDeviceServer(database, 'embedded', {
        attestationRoots: rootsFile,
        attestationPackageName: TEST_AGENT.packageName,
        attestationSignatureDigests: [TEST_AGENT.signatureDigest],
      });
      try {
        const rooted = attestingAgent(recording, 'StrongBox', undefined, {
          rootOfTrust: { deviceLocked: false, verifiedBootState: VerifiedBootState.selfSigned },
        });
        await rooted.register();
        expect(rooted.lastRegistration?.keySecurityLevel).toBeNull();
        const shown = await api(admin, '/api/v2/deviceIdentity', { imei: rooted.imei });
        expect(shown.json()).toMatchObject({
          hasKey: true,
          keySecurityLevel: null,
          attestation: {
            passed: false,
            reasons: [
              "The phone's bootloader is unlocked.",
              "The phone's verified boot state is SelfSigned, not Verified.",
            ],
            checkedAt: expect.any(String),
          },
        });
        // A plain agent sends no attestation: no verdict.
        const plain = simulatedDevice(recording);
        await plain.register();
        expect((await api(admin, '/api/v2/deviceIdentity', { imei: plain.imei })).json()).toMatchObject({
          attestation: null,
        });
      } finally {
        await recording.close();
      }
    });
  });

  describe('enrollment secrets', () => {
    it('a SUPERADMIN adds, lists and revokes named secrets; revoking one never touches enrolled devices', async () => {
      const added = await api(superadmin, '/api/v2/enrollmentSecrets', { name: 'shop-7' });
      expect(added.statusCode).toBe(200);
      const { secret, id } = added.json() as { secret: string; id: number };
      expect(added.json().message).toBe(
        'Enrollment secret shop-7 added. Copy it now: it is not shown again.',
      );
      const stored = await database.db
        .selectFrom('enrollment_secrets')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(stored.secret_hash).not.toContain(secret);
      // An ADMIN cannot see or add secrets; the list never carries a secret or its hash.
      expect(
        (
          await server.app.inject({
            method: 'GET',
            url: '/api/v2/enrollmentSecrets',
            headers: { 'x-api-key': admin },
          })
        ).statusCode,
      ).toBe(403);
      const listed = await server.app.inject({
        method: 'GET',
        url: '/api/v2/enrollmentSecrets',
        headers: { 'x-api-key': superadmin },
      });
      expect(listed.body).not.toContain(secret);
      expect(listed.body).not.toContain(stored.secret_hash);
      expect(listed.json().items).toContainEqual(
        expect.objectContaining({ name: 'shop-7', state: 'active' }),
      );
      const duplicate = await api(superadmin, '/api/v2/enrollmentSecrets', { name: 'shop-7' });
      expect(duplicate.statusCode).toBe(409);

      const phone = agent({ enrollmentSecret: secret });
      await phone.register();
      await phone.connect();
      await online(phone.imei, true);
      const revoked = await api(superadmin, '/api/v2/enrollmentSecrets/revoke', { id });
      expect(revoked.json().message).toBe('Enrollment secret shop-7 revoked.');
      expect((await post('/device/v1/register', randomProfile(), secret)).status).toBe(401);
      // The device enrolled with it keeps its credential and its connection.
      expect(phone.online).toBe(true);
      await phone.dropOffline();
      await phone.connect();
      await online(phone.imei, true);
      const audits = await database.db
        .selectFrom('audit_log')
        .select('action')
        .where('action', 'like', 'enrollment.secret.%')
        .where('target', '=', 'shop-7')
        .orderBy('id')
        .execute();
      expect(audits.map((a) => a.action)).toEqual(['enrollment.secret.add', 'enrollment.secret.revoke']);
      // An expired secret admits no one.
      const expiring = (
        await api(superadmin, '/api/v2/enrollmentSecrets', {
          name: 'short',
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        })
      ).json() as { secret: string; id: number };
      expect((await post('/device/v1/nonce', { imei1: randomProfile().imei1 }, expiring.secret)).status).toBe(
        200,
      );
      await sql`UPDATE enrollment_secrets SET expires_at = now() - interval '1 second' WHERE id = ${expiring.id}`.execute(
        database.db,
      );
      expect((await post('/device/v1/nonce', { imei1: randomProfile().imei1 }, expiring.secret)).status).toBe(
        401,
      );
      const past = await api(superadmin, '/api/v2/enrollmentSecrets', {
        name: 'past',
        expiresAt: '2020-01-01T00:00:00Z',
      });
      expect(past.statusCode).toBe(400);
    });

    it('limits registrations with a right secret per address', async () => {
      const limited = await startDeviceServer(database, 'embedded', { registrationMaxPerAddress: 3 });
      try {
        await database.db.deleteFrom('login_throttle').where('key', 'like', 'enroll-ok-%').execute();
        const register = (profile: DeviceRegistration, remoteAddress = '10.20.30.40') =>
          limited.app.inject({
            method: 'POST',
            url: '/device/v1/register',
            headers: { 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
            payload: profile,
            remoteAddress,
          });
        for (let i = 0; i < 3; i++) expect((await register(randomProfile())).statusCode).toBe(200);
        const profile = randomProfile();
        const refused = await register(profile);
        expect(refused.statusCode).toBe(429);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        expect(refused.json().message).toBe(
          'Too many registrations from this address. Please try again in 15 minutes.',
        );
        // Another address is not held back, nor the server's own machine (the demo fleet, npm run sim).
        expect((await register(randomProfile(), '10.20.30.41')).statusCode).toBe(200);
        for (let i = 0; i < 4; i++)
          expect((await register(randomProfile(), '127.0.0.1')).statusCode).toBe(200);
        expect(
          await database.db
            .selectFrom('devices')
            .select('imei1')
            .where('imei1', '=', profile.imei1)
            .executeTakeFirst(),
        ).toBeUndefined();
      } finally {
        await database.db.deleteFrom('login_throttle').where('key', 'like', 'enroll-ok-%').execute();
        await limited.close();
      }
    });
  });
});
