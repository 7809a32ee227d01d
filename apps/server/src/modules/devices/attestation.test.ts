/**
 * The key attestation verifier: chains made by test/attestation-certs.ts under a root of the test's own
 * (each rule refused with its own reason, and bad input answered, never thrown), a real chain from a
 * Google-certified device against the shipped roots, and the shipped roots file itself.
 */
import 'reflect-metadata'; // before @peculiar/x509, which needs it
import { generateKeyPairSync, type webcrypto } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { VerifiedBootState } from '@peculiar/asn1-android';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildAttestation,
  createTestIntermediate,
  createTestRoot,
  encodeKeyDescription,
  issueLeaf,
  LEAF_SUBJECT,
  TEST_AGENT,
  type TestRoot,
} from '../../../test/attestation-certs';
import {
  type AttestationPolicy,
  type AttestationRoots,
  defaultAttestationRootsPath,
  type KeySecurityLevel,
  loadAttestationRoots,
  verifyAttestation,
} from './attestation';
import { parseRevocationList } from './attestation-status';

const DAY = 24 * 60 * 60 * 1000;
const challenge = Buffer.from('server-nonce-0123456789abcdef', 'utf8');

function deviceKey(): string {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
}

/** A DER TLV with a short length: enough for the small test vectors below. */
function tlv(tag: number[], ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from(tag), Buffer.from([body.length]), body]);
}

/**
 * KeyDescription { version, TrustedEnvironment, version, TrustedEnvironment, challenge, '', {},
 * { [704] RootOfTrust { key, locked, Verified }, [1000] 5 } }: hardwareEnforced holds a tag
 * @peculiar/asn1-android does not know, as a newer KeyMint may write.
 */
function newerKeyDescription(version: Buffer): Buffer {
  return tlv(
    [0x30],
    tlv([0x02], version),
    tlv([0x0a], Buffer.from([1])),
    tlv([0x02], version),
    tlv([0x0a], Buffer.from([1])),
    tlv([0x04], challenge),
    tlv([0x04]),
    tlv([0x30]),
    tlv(
      [0x30],
      tlv(
        [0xbf, 0x85, 0x40],
        tlv(
          [0x30],
          tlv([0x04], Buffer.alloc(4, 7)),
          tlv([0x01], Buffer.from([0xff])),
          tlv([0x0a], Buffer.from([0])),
        ),
      ),
      tlv([0xbf, 0x87, 0x68], tlv([0x02], Buffer.from([5]))),
    ),
  );
}

let root: TestRoot;
let roots: AttestationRoots;

beforeAll(async () => {
  root = await createTestRoot();
  roots = loadAttestationRoots(root.pem);
});

describe('verifyAttestation accepts', () => {
  it.each<KeySecurityLevel>(['TrustedEnvironment', 'StrongBox'])(
    'a valid chain of a %s key and answers its security level',
    async (securityLevel) => {
      const publicKey = deviceKey();
      const { chain } = await buildAttestation({ publicKey, challenge, securityLevel, root });
      expect(chain).toHaveLength(3);
      expect(await verifyAttestation({ chain, publicKey, challenge, roots })).toEqual({
        ok: true,
        securityLevel,
        attestationVersion: 300,
      });
    },
  );

  it('a chain without the root (the last certificate signed by a root) and under an RSA root', async () => {
    const rsaRoot = await createTestRoot({ algorithm: 'RSA' });
    const publicKey = deviceKey();
    const { chain, rootPem } = await buildAttestation({
      publicKey,
      challenge,
      securityLevel: 'TrustedEnvironment',
      root: rsaRoot,
      includeRoot: false,
      attestationVersion: 400,
    });
    expect(chain).toHaveLength(2);
    const outcome = await verifyAttestation({
      chain,
      publicKey,
      challenge,
      roots: loadAttestationRoots(rootPem),
    });
    expect(outcome).toEqual({ ok: true, securityLevel: 'TrustedEnvironment', attestationVersion: 400 });
  });

  it('a chain whose root is a re-issue of a trusted root: the same name and key, other dates', async () => {
    const publicKey = deviceKey();
    const { chain, root: original } = await buildAttestation({
      publicKey,
      challenge,
      securityLevel: 'StrongBox',
    });
    const reissue = await x509.X509CertificateGenerator.create({
      serialNumber: '7e',
      subject: original.certificate.subjectName,
      issuer: original.certificate.subjectName,
      notBefore: new Date(Date.now() - 10 * 365 * DAY),
      notAfter: new Date(Date.now() - 365 * DAY), // expired: the anchor's dates are not checked
      publicKey: original.certificate.publicKey,
      signingKey: original.privateKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as webcrypto.EcdsaParams,
    });
    const reissued = [...chain.slice(0, -1), Buffer.from(reissue.rawData).toString('base64')];
    const outcome = await verifyAttestation({
      chain: reissued,
      publicKey,
      challenge,
      roots: loadAttestationRoots(original.pem),
    });
    expect(outcome).toMatchObject({ ok: true, securityLevel: 'StrongBox' });
  });

  it("a leaf outside its validity period, as Google's verifier does (the device sets them)", async () => {
    const publicKey = deviceKey();
    const { chain } = await buildAttestation({
      publicKey,
      challenge,
      securityLevel: 'TrustedEnvironment',
      root,
      leafValidity: {
        notBefore: new Date('2000-01-01T00:00:00Z'),
        notAfter: new Date('2001-01-01T00:00:00Z'),
      },
    });
    expect(await verifyAttestation({ chain, publicKey, challenge, roots })).toMatchObject({ ok: true });
  });

  it('a key description with a tag newer than the ASN.1 schema knows', async () => {
    const publicKey = deviceKey();
    const keyDescription = newerKeyDescription(Buffer.from([0x01, 0xf4]));
    const { chain } = await buildAttestation({
      publicKey,
      challenge,
      securityLevel: 'TrustedEnvironment',
      root,
      keyDescription,
    });
    expect(await verifyAttestation({ chain, publicKey, challenge, roots })).toEqual({
      ok: true,
      securityLevel: 'TrustedEnvironment',
      attestationVersion: 500,
    });
  });

  it('a chain wrapped at 76 columns, as Android Base64.DEFAULT writes it', async () => {
    const publicKey = deviceKey();
    const { chain } = await buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root });
    const wrapped = chain.map((c) => `${c.replace(/.{76}/g, '$&\n')}\n`);
    expect(await verifyAttestation({ chain: wrapped, publicKey, challenge, roots })).toMatchObject({
      ok: true,
    });
  });

  describe('verifyAttestation refuses', () => {
    async function refusal(
      build: (publicKey: string) => Promise<{ chain: string[]; publicKey?: string; challenge?: Buffer }>,
      now?: Date,
    ): Promise<unknown> {
      const publicKey = deviceKey();
      const built = await build(publicKey);
      return verifyAttestation({
        chain: built.chain,
        publicKey: built.publicKey ?? publicKey,
        challenge: built.challenge ?? challenge,
        roots,
        ...(now ? { now } : {}),
      });
    }

    it('a challenge other than the one issued', async () => {
      const outcome = await refusal(async (publicKey) => ({
        ...(await buildAttestation({
          publicKey,
          challenge: 'an old nonce',
          securityLevel: 'StrongBox',
          root,
        })),
      }));
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The attestation challenge is not the one the server issued.',
      });
    });

    it('a leaf whose key is not the device public key', async () => {
      const outcome = await refusal(async (publicKey) => ({
        ...(await buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root })),
        publicKey: deviceKey(),
      }));
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The attested key is not the device public key.',
      });
    });

    it('a chain from another root, with or without that root in it', async () => {
      const other = await createTestRoot({ name: 'CN=LendLock Test Attestation Root, O=LendLock Tests' });
      for (const includeRoot of [true, false]) {
        const outcome = await refusal(async (publicKey) =>
          buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root: other, includeRoot }),
        );
        expect(outcome).toEqual({
          ok: false,
          reasons: [expect.any(String)],
          reason: 'The attestation chain does not end at a trusted root.',
        });
      }
    });

    it('a broken link: the intermediate of another chain under the same root', async () => {
      const outcome = await refusal(async (publicKey) => {
        const { chain } = await buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root });
        const other = await createTestIntermediate(root); // the same name, another key
        return { chain: [chain[0] as string, other.base64, root.base64] };
      });
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'Certificate 1 of the attestation chain is not signed by certificate 2.',
      });
    });

    it("a certificate signed by the next one's key but naming another issuer", async () => {
      const outcome = await refusal(async (publicKey) => {
        const intermediate = await createTestIntermediate(root);
        const leaf = await issueLeaf({
          issuer: { name: 'CN=Someone Else', privateKey: intermediate.privateKey },
          publicKey,
          keyDescription: encodeKeyDescription({ challenge, securityLevel: 'StrongBox' }),
        });
        return { chain: [leaf, intermediate.base64, root.base64] };
      });
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'Certificate 1 of the attestation chain names an issuer other than certificate 2.',
      });
    });

    it('a leaf without the key description extension', async () => {
      const outcome = await refusal((publicKey) =>
        buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root, keyDescription: null }),
      );
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The leaf certificate has no Android key description extension.',
      });
    });

    it('a key description that does not parse, or with an unknown security level or version', async () => {
      const garbled = await refusal((publicKey) =>
        buildAttestation({
          publicKey,
          challenge,
          securityLevel: 'StrongBox',
          root,
          keyDescription: Buffer.from([0x42, 0x42]),
        }),
      );
      expect(garbled).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The key description extension does not parse.',
      });
      const unknown = await refusal(async (publicKey) => {
        const keyDescription = encodeKeyDescription({ challenge, securityLevel: 'StrongBox' });
        // attestationSecurityLevel is the second field: SEQUENCE, INTEGER 300 (02 02 01 2c), ENUMERATED 2
        // (0a 01 02).
        const at = keyDescription.indexOf(Buffer.from([0x0a, 0x01, 0x02]));
        expect(at).toBeGreaterThan(0);
        keyDescription[at + 2] = 7;
        return buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root, keyDescription });
      });
      expect(unknown).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The key description has an unknown security level.',
      });
      const huge = await refusal((publicKey) =>
        buildAttestation({
          publicKey,
          challenge,
          securityLevel: 'StrongBox',
          root,
          keyDescription: newerKeyDescription(Buffer.from('7fffffffffffffffff', 'hex')),
        }),
      );
      expect(huge).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The key description has an invalid attestation version.',
      });
    });

    it('a key description in a certificate other than the leaf (a forged leaf added to a chain)', async () => {
      const outcome = await refusal(async () => {
        // A genuine attestation of a key the attacker can use, which then signs a leaf for another key.
        const attested = (await globalThis.crypto.subtle.generateKey(
          { name: 'ECDSA', namedCurve: 'P-256' },
          true,
          ['sign', 'verify'],
        )) as webcrypto.CryptoKeyPair;
        const attestedKey = Buffer.from(
          await globalThis.crypto.subtle.exportKey('spki', attested.publicKey),
        ).toString('base64');
        const genuine = await buildAttestation({
          publicKey: attestedKey,
          challenge: 'an old nonce',
          securityLevel: 'Software',
          root,
        });
        const forgedKey = deviceKey();
        const forged = await issueLeaf({
          issuer: { name: LEAF_SUBJECT, privateKey: attested.privateKey },
          publicKey: forgedKey,
          keyDescription: encodeKeyDescription({ challenge, securityLevel: 'StrongBox' }),
        });
        return { chain: [forged, ...genuine.chain], publicKey: forgedKey };
      });
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason:
          'A certificate other than the leaf carries a key description, so the chain may have been forged.',
      });
    });

    it('a leaf with the key description twice', async () => {
      const outcome = await refusal(async (publicKey) => {
        const intermediate = await createTestIntermediate(root);
        const description = encodeKeyDescription({ challenge, securityLevel: 'StrongBox' });
        const leaf = await issueLeaf({
          issuer: { name: intermediate.certificate.subjectName, privateKey: intermediate.privateKey },
          publicKey,
          keyDescription: [description, encodeKeyDescription({ challenge, securityLevel: 'Software' })],
        });
        return { chain: [leaf, intermediate.base64, root.base64] };
      });
      expect(outcome).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The leaf certificate carries more than one key description.',
      });
    });

    it('an expired intermediate, or one not yet valid', async () => {
      const expired = await refusal((publicKey) =>
        buildAttestation({
          publicKey,
          challenge,
          securityLevel: 'StrongBox',
          root,
          intermediateValidity: {
            notBefore: new Date('2020-01-01T00:00:00Z'),
            notAfter: new Date('2021-06-30T00:00:00Z'),
          },
        }),
      );
      expect(expired).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'Certificate 2 of the attestation chain expired on 2021-06-30.',
      });
      const early = await refusal((publicKey) =>
        buildAttestation({
          publicKey,
          challenge,
          securityLevel: 'StrongBox',
          root,
          intermediateValidity: {
            notBefore: new Date('2040-01-01T00:00:00Z'),
            notAfter: new Date('2041-01-01T00:00:00Z'),
          },
        }),
      );
      expect(early).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'Certificate 2 of the attestation chain is not valid before 2040-01-01.',
      });
    });

    it('a chain checked at a `now` after its intermediate expired', async () => {
      const outcome = await refusal(
        (publicKey) => buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root }),
        new Date(Date.now() + 2 * 365 * DAY),
      );
      expect(outcome).toMatchObject({
        ok: false,
        reasons: [expect.any(String)],
        reason: expect.stringMatching(/^Certificate 2 .* expired on /),
      });
    });

    it('garbage, answered and never thrown', async () => {
      const publicKey = deviceKey();
      const { chain } = await buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root });
      const cases: [unknown, unknown, string][] = [
        [[], publicKey, 'The attestation chain is empty.'],
        [undefined, publicKey, 'The attestation chain is not a list of certificates.'],
        ['not an array', publicKey, 'The attestation chain is not a list of certificates.'],
        [Array(11).fill(chain[0]), publicKey, 'The attestation chain has more than 10 certificates.'],
        [['%%% not base64 %%%'], publicKey, 'Certificate 1 of the attestation chain is not valid base64.'],
        [[chain[0], 42], publicKey, 'Certificate 2 of the attestation chain is not valid base64.'],
        [[chain[0], ''], publicKey, 'Certificate 2 of the attestation chain is not valid base64.'],
        [['AAAA'], publicKey, 'Certificate 1 of the attestation chain is not a DER X.509 certificate.'],
        [
          [chain[0], Buffer.from('hello, world').toString('base64')],
          publicKey,
          'Certificate 2 of the attestation chain is not a DER X.509 certificate.',
        ],
        [
          [(chain[0] as string).slice(0, 200)],
          publicKey,
          'Certificate 1 of the attestation chain is not a DER X.509 certificate.',
        ],
        [chain, '!!!', 'The device public key is not valid base64.'],
        [chain, undefined, 'The device public key is not valid base64.'],
      ];
      for (const [badChain, badKey, reason] of cases) {
        const outcome = await verifyAttestation({
          chain: badChain as string[],
          publicKey: badKey as string,
          challenge,
          roots,
        });
        expect(outcome).toEqual({ ok: false, reason, reasons: [reason] });
      }
      expect(
        await verifyAttestation({ chain, publicKey, challenge, roots: { size: 1 } as AttestationRoots }),
      ).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'No trusted attestation roots are loaded.',
      });
      expect(
        await verifyAttestation({ chain, publicKey, challenge: undefined as unknown as Buffer, roots }),
      ).toEqual({
        ok: false,
        reasons: [expect.any(String)],
        reason: 'The server issued no attestation challenge.',
      });
      expect(await verifyAttestation({ chain, publicKey, challenge, roots, now: new Date('never') })).toEqual(
        {
          ok: false,
          reasons: [expect.any(String)],
          reason: 'The time to verify the attestation at is not a valid date.',
        },
      );
    });
  });
});

describe('verifyAttestation refuses what the attestation says of the phone and the app', () => {
  const agentPolicy: AttestationPolicy = {
    packageName: TEST_AGENT.packageName,
    signatureDigests: [TEST_AGENT.signatureDigest],
    revocations: null,
  };
  async function verdict(
    options: Omit<Parameters<typeof buildAttestation>[0], 'publicKey' | 'challenge' | 'root'>,
    policy: AttestationPolicy = agentPolicy,
  ) {
    const publicKey = deviceKey();
    const built = await buildAttestation({ publicKey, challenge, root, ...options });
    return verifyAttestation({ chain: built.chain, publicKey, challenge, roots, policy });
  }

  it("accepts the agent's key in a locked, verified phone's secure hardware", async () => {
    expect(await verdict({ securityLevel: 'StrongBox' })).toEqual({
      ok: true,
      securityLevel: 'StrongBox',
      attestationVersion: 300,
    });
    // keytool prints digests in uppercase with colons.
    const keytool = TEST_AGENT.signatureDigest.toUpperCase().match(/../g)?.join(':') ?? '';
    expect(
      await verdict({ securityLevel: 'TrustedEnvironment' }, { ...agentPolicy, signatureDigests: [keytool] }),
    ).toMatchObject({ ok: true });
  });

  it('a software-level attestation, or a key kept by software', async () => {
    expect(await verdict({ securityLevel: 'Software' })).toEqual({
      ok: false,
      reasons: [
        'The key was attested by software (security level Software), not by secure hardware.',
        'The key is kept by software (keymaster security level Software), not by secure hardware.',
        'The attestation carries no hardware-enforced root of trust (bootloader and boot state).',
      ],
      reason: expect.stringMatching(/^The key was attested by software .* \(bootloader and boot state\)\.$/),
    });
    expect(
      await verdict({ securityLevel: 'TrustedEnvironment', keymasterSecurityLevel: 'Software' }),
    ).toMatchObject({
      ok: false,
      reasons: ['The key is kept by software (keymaster security level Software), not by secure hardware.'],
    });
  });

  it('an unlocked bootloader, a boot that is not Verified, or no root of trust', async () => {
    expect(
      await verdict({
        securityLevel: 'TrustedEnvironment',
        rootOfTrust: { deviceLocked: false, verifiedBootState: VerifiedBootState.unverified },
      }),
    ).toEqual({
      ok: false,
      reasons: [
        "The phone's bootloader is unlocked.",
        "The phone's verified boot state is Unverified, not Verified.",
      ],
      reason:
        "The phone's bootloader is unlocked. The phone's verified boot state is Unverified, not Verified.",
    });
    expect(
      await verdict({
        securityLevel: 'StrongBox',
        rootOfTrust: { deviceLocked: true, verifiedBootState: VerifiedBootState.selfSigned },
      }),
    ).toMatchObject({ ok: false, reasons: ["The phone's verified boot state is SelfSigned, not Verified."] });
    expect(await verdict({ securityLevel: 'StrongBox', rootOfTrust: null })).toMatchObject({
      ok: false,
      reasons: ['The attestation carries no hardware-enforced root of trust (bootloader and boot state).'],
    });
  });

  it("another app's key, another signer's, or a key that names no app", async () => {
    expect(
      await verdict({
        securityLevel: 'StrongBox',
        application: { packageNames: ['com.example.cloner'], signatureDigests: [TEST_AGENT.signatureDigest] },
      }),
    ).toMatchObject({
      ok: false,
      reasons: [`The key was made by com.example.cloner, not by ${TEST_AGENT.packageName}.`],
    });
    const resigned = await verdict({
      securityLevel: 'StrongBox',
      application: {
        packageNames: [TEST_AGENT.packageName],
        signatureDigests: [TEST_AGENT.signatureDigest, 'b2'.repeat(32)],
      },
    });
    expect(resigned).toMatchObject({
      ok: false,
      reasons: ['The application that made the key is not signed with a configured signing certificate.'],
    });
    expect(await verdict({ securityLevel: 'StrongBox', application: null })).toMatchObject({
      ok: false,
      reasons: ['The attestation does not name the application that made the key.'],
    });
    // Without a package or digest configured, the app is not checked.
    expect(
      await verdict(
        { securityLevel: 'StrongBox', application: null },
        { ...agentPolicy, packageName: null, signatureDigests: [] },
      ),
    ).toMatchObject({ ok: true });
  });

  it('a chain with a certificate on the revocation status list, or any chain while the list is unreadable', async () => {
    const publicKey = deviceKey();
    const { chain, intermediate } = await buildAttestation({
      publicKey,
      challenge,
      root,
      securityLevel: 'StrongBox',
    });
    // Google writes serials in lowercase hex without leading zeros.
    const serial = intermediate.certificate.serialNumber.toUpperCase();
    const list = parseRevocationList(
      JSON.stringify({
        entries: {
          [`00${serial}`]: { status: 'REVOKED', reason: 'KEY_COMPROMISE' },
          '2c8cdddfd5e03bfc': { status: 'SUSPENDED' },
        },
      }),
    );
    const check = (revocations: AttestationPolicy['revocations']) =>
      verifyAttestation({ chain, publicKey, challenge, roots, policy: { ...agentPolicy, revocations } });
    expect(await check({ entries: list })).toMatchObject({
      ok: false,
      reasons: [
        'Certificate 2 of the attestation chain is on the revocation status list (REVOKED, KEY_COMPROMISE).',
      ],
    });
    expect(await check({ entries: parseRevocationList('{"entries": {}}') })).toMatchObject({ ok: true });
    expect(await check({ problem: 'The attestation status list could not be read.' })).toMatchObject({
      ok: false,
      reasons: ['The attestation status list could not be read.'],
    });
  });
});

describe("Google's roots (attestation-roots.pem)", () => {
  const pem = readFileSync(defaultAttestationRootsPath(), 'utf8');
  const blocks = x509.PemConverter.decode(pem);

  it('lies beside the module and loads', () => {
    expect(defaultAttestationRootsPath()).toMatch(
      /apps\/server\/src\/modules\/devices\/attestation-roots\.pem$/,
    );
    expect(loadAttestationRoots(pem).size).toBe(5);
    expect(blocks).toHaveLength(5);
  });

  it('are each a certificate that parses, is self-signed and verifies its own signature', async () => {
    const subjects: string[] = [];
    for (const der of blocks) {
      const certificate = new x509.X509Certificate(der);
      subjects.push(certificate.subject);
      expect(certificate.subject).toBe(certificate.issuer);
      expect(await certificate.verify({ signatureOnly: true })).toBe(true);
      expect(await certificate.isSelfSigned()).toBe(true);
    }
    expect(subjects).toEqual([
      '2.5.4.5=f92009e853b6b045',
      'CN=Key Attestation CA1, OU=Android, O=Google LLC, C=US',
      '2.5.4.5=f92009e853b6b045',
      '2.5.4.5=f92009e853b6b045',
      '2.5.4.5=f92009e853b6b045',
    ]);
  });

  it('hold the pinned SHA-256 fingerprints of the current RSA root and of Key Attestation CA1', async () => {
    const fingerprints = await Promise.all(
      blocks.map(async (der) =>
        Buffer.from(await new x509.X509Certificate(der).getThumbprint('SHA-256')).toString('hex'),
      ),
    );
    expect(fingerprints[0]).toBe('cedb1cb6dc896ae5ec797348bce9286753c2b38ee71ce0fbe34a9a1248800dfc');
    expect(fingerprints[1]).toBe('6d9db4ce6c5c0b293166d08986e05774a8776ceb525d9e4329520de12ba4bcc0');
  });

  it('refuse a file without certificates, or with one that does not parse, with a clear error', () => {
    expect(() => loadAttestationRoots('# nothing here\n')).toThrow(
      'The attestation roots file holds no PEM certificate.',
    );
    expect(() =>
      loadAttestationRoots('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
    ).toThrow(/^Certificate 1 of the attestation roots file does not parse/);
  });

  /**
   * A real chain from a Google-certified, remotely provisioned device (TEE, attestation version 200,
   * challenge "challenge"), verbatim from google/android-key-attestation, file
   * server/src/test/resources/normal_cert_chain.pem (Apache-2.0). Its intermediates were valid from
   * 2023-02-19 to 2023-03-24; its last certificate is the 2019 issue of Google's RSA root.
   */
  const REAL_CHAIN_PEM = `
-----BEGIN CERTIFICATE-----
MIICuTCCAl+gAwIBAgIBATAKBggqhkjOPQQDAjA5MQwwCgYDVQQKEwNURUUxKTAnBgNVBAMTIGQw
NWZhY2Y0NDNlZDUzNTU0OGQ5OTRmNjg0NWU2ZDNjMB4XDTcwMDEwMTAwMDAwMFoXDTQ4MDEwMTAw
MDAwMFowHzEdMBsGA1UEAxMUQW5kcm9pZCBLZXlzdG9yZSBLZXkwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAATlEk81F62fSuW5++oaWJuzZbgUovEpFp0uCA8tALfCeTtktSK61cUp86sMVI9lFxvo
6QpTneTaRn3VkgaDeuXYo4IBcDCCAWwwDgYDVR0PAQH/BAQDAgeAMIIBWAYKKwYBBAHWeQIBEQSC
AUgwggFEAgIAyAoBAQICAMgKAQEECWNoYWxsZW5nZQQAMIGCv4MQCAIGAYbBoxs/v4MRCAIGAYbB
sl1/v4MSCAIGAYbBwZ+/v4U9CAIGAYbBo0KWv4VFTgRMMEoxJDAiBB1jb20uZ29vZ2xlLmF0dGVz
dGF0aW9uZXhhbXBsZQIBATEiBCBohW0dBvY31iVfrOWyJNtDqVFKzlOLsVSLhESA/NhchzCBoaEF
MQMCAQKiAwIBA6MEAgIBAKUFMQMCAQSqAwIBAb+DdwIFAL+FPgMCAQC/hUBMMEoEICasTGC+seN4
NXytDDBhNHr432+6u7DYzqJEWFXuAeNoAQH/CgEABCDqpFM5V3TfoREhXGB7fQnxJVf3ZRXR+pcW
lscdqxZ+Qb+FQQUCAwH70L+FQgUCAwMWPr+FTgYCBAE0sD2/hU8GAgQBNLA9MAoGCCqGSM49BAMC
A0gAMEUCIQDn6o9XqsHmkT2d1EyzlGWJcZEyoXARjM3Hkmzm7vMvNwIgBWhp60QJKwr1VSNggJp+
pJv2WJOxkdTOLHy85MJMXhU=
-----END CERTIFICATE-----
-----BEGIN CERTIFICATE-----
MIIBxDCCAWqgAwIBAgIRANBfrPRD7VNVSNmU9oRebTwwCgYIKoZIzj0EAwIwKTETMBEGA1UEChMK
R29vZ2xlIExMQzESMBAGA1UEAxMJRHJvaWQgQ0EzMB4XDTIzMDIxODAxMzM1MloXDTIzMDMyNDAx
MzM1MlowOTEMMAoGA1UEChMDVEVFMSkwJwYDVQQDEyBkMDVmYWNmNDQzZWQ1MzU1NDhkOTk0ZjY4
NDVlNmQzYzBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHExGJmFHbe4bBnbxXer2haFmsyBMRCy
HPdjwUzOQ1jKt+OhQ2JI0EQdJuDC4tyM2byZhxXlvP6itjzkLSju69qjYzBhMB0GA1UdDgQWBBQp
APiyZzxgyCuIv++2jELSN/zsMjAfBgNVHSMEGDAWgBRgBjXo561pHSkjTd05NGwF7DylCjAPBgNV
HRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwICBDAKBggqhkjOPQQDAgNIADBFAiBZK4xVrYp17UeA
3XpKV9aXjFB8nXGdhpL6irqADHXBcgIhAItlP0fTqTocHWBuz4vxnZsZyAUgyio14rgmwsi0eVkb
-----END CERTIFICATE-----
-----BEGIN CERTIFICATE-----
MIIB2DCCAV2gAwIBAgIUAIGiWxUvRzifGggDzLZIEaw9lcIwCgYIKoZIzj0EAwMwKTETMBEGA1UE
ChMKR29vZ2xlIExMQzESMBAGA1UEAxMJRHJvaWQgQ0EyMB4XDTIzMDIxOTE4MjgzNloXDTIzMDMy
NjE4MjgzNVowKTETMBEGA1UEChMKR29vZ2xlIExMQzESMBAGA1UEAxMJRHJvaWQgQ0EzMFkwEwYH
KoZIzj0CAQYIKoZIzj0DAQcDQgAEFIf+wsXWQsQwKh86h02Jx/Lk2pn+n4SFErM0ypR4P9mtc1w3
/FOnR/XYUSL4raXE2t0oc1tFtjXtebOajn1GMqNjMGEwDgYDVR0PAQH/BAQDAgIEMA8GA1UdEwEB
/wQFMAMBAf8wHQYDVR0OBBYEFGAGNejnrWkdKSNN3Tk0bAXsPKUKMB8GA1UdIwQYMBaAFKYLhqTw
yH8ztWE5Ys0956c6QoNIMAoGCCqGSM49BAMDA2kAMGYCMQDRxapkNz6xvgZugF/pEkeUNt2LdZS2
dXFt+kF4OsY0VtuQFduSrLFa/FhuK46trWUCMQCRsy7zJhac0BU9/FeJ0v8M7N8zMQdnqRPpQWed
9Zl0n6uyCpb50qiVVEH/dFgrX9k=
-----END CERTIFICATE-----
-----BEGIN CERTIFICATE-----
MIIDgDCCAWigAwIBAgIKA4gmZ2BliZaGDjANBgkqhkiG9w0BAQsFADAbMRkwFwYDVQQFExBmOTIw
MDllODUzYjZiMDQ1MB4XDTIyMDEyNjIyNDk0NVoXDTM3MDEyMjIyNDk0NVowKTETMBEGA1UEChMK
R29vZ2xlIExMQzESMBAGA1UEAxMJRHJvaWQgQ0EyMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE+9mb
WCdCNnrRYaLr7VbNLAc72LMfLYTQmVdcLAz77DA0kz4o/jNcARQ9NDlJ9m31OW+ytv7djZF3Nvv1
fYPvpnW+kqERpifwBvUnGOtCykgO4j0+4Gf+fqtLZxDz2SQqo2YwZDAdBgNVHQ4EFgQUpguGpPDI
fzO1YTlizT3npzpCg0gwHwYDVR0jBBgwFoAUNmHhAHyIBQlRi0RsR/8aTMnqTxIwEgYDVR0TAQH/
BAgwBgEB/wIBAjAOBgNVHQ8BAf8EBAMCAQYwDQYJKoZIhvcNAQELBQADggIBAK6Qdni2yhzXEukN
03dze2QoFSzdKgOwm6DPhbbuGGAHB8Yfnv7JO0+1zoOUuHfWvww+5iF4BDUgTwf31agpwWkgyjSd
51Lgtf/YHE/eaeJCiaNLanLFsPFoClSYTbmQje3f84hy4kUXKyrWo/eOEx87Mu7wfqUmou4E2of0
Saw0CPdWw1CYJXfP6f0AG1Z2APKPprDtLESsYBdVeULgcAU36XZKrIai958AZtLKH6iP6zPiTkGr
2t/iLqx735M4qIjidLhSZwRlY6WRcBsLJsisM5ft6kSpZB4IADird5UEOBoiZzgptdCa8T2tmWtC
uv5MpOmMr70XBTWouXo95zCiT4Pnnhtp0k+jenjxbmnqDUJw+F5GoBhREGM3Kr7HRbJrG1BTIIRZ
e8xFWHbHLkoAhvd/cMVtSYCshuXHuwiONN9vMPSLjn/JlEv1t4uI0n8agiW3oMqP0ig6QyC54SVA
ctE93zfJr/QMjtLqCQZb56ICFb9knaWFLfdr8johjMtycf2UVoyEWu4iFd1Z4yyP/6YAq10CzIp2
VhFrMVcYNuZ65PLt9p2XeuwyTd5Nhbn0W7Jh2ZcvQi6ND+/ZZCBAt64ny6qiXg8h0DWgTFAugUg2
eUSQrTI0mcNsS+c9F/f8wbClT5DFutYTISs1ZmDS3tQyUADUT/np67uYtaF5
-----END CERTIFICATE-----
-----BEGIN CERTIFICATE-----
MIIFHDCCAwSgAwIBAgIJANUP8luj8tazMA0GCSqGSIb3DQEBCwUAMBsxGTAXBgNVBAUTEGY5MjAw
OWU4NTNiNmIwNDUwHhcNMTkxMTIyMjAzNzU4WhcNMzQxMTE4MjAzNzU4WjAbMRkwFwYDVQQFExBm
OTIwMDllODUzYjZiMDQ1MIICIjANBgkqhkiG9w0BAQEFAAOCAg8AMIICCgKCAgEAr7bHgiuxpwHs
K7Qui8xUFmOr75gvMsd/dTEDDJdSSxtf6An7xyqpRR90PL2abxM1dEqlXnf2tqw1Ne4Xwl5jlRfd
nJLmN0pTy/4lj4/7tv0Sk3iiKkypnEUtR6WfMgH0QZfKHM1+di+y9TFRtv6y//0rb+T+W8a9nsNL
/ggjnar86461qO0rOs2cXjp3kOG1FEJ5MVmFmBGtnrKpa73XpXyTqRxB/M0n1n/W9nGqC4FSYa04
T6N5RIZGBN2z2MT5IKGbFlbC8UrW0DxW7AYImQQcHtGl/m00QLVWutHQoVJYnFPlXTcHYvASLu+R
hhsbDmxMgJJ0mcDpvsC4PjvB+TxywElgS70vE0XmLD+OJtvsBslHZvPBKCOdT0MS+tgSOIfga+z1
Z1g7+DVagf7quvmag8jfPioyKvxnK/EgsTUVi2ghzq8wm27ud/mIM7AY2qEORR8Go3TVB4HzWQgp
Zrt3i5MIlCaY504LzSRiigHCzAPlHws+W0rB5N+er5/2pJKnfBSDiCiFAVtCLOZ7gLiMm0jhO2B6
tUXHI/+MRPjy02i59lINMRRev56GKtcd9qO/0kUJWdZTdA2XoS82ixPvZtXQpUpuL12ab+9EaDK8
Z4RHJYYfCT3Q5vNAXaiWQ+8PTWm2QgBR/bkwSWc+NpUFgNPN9PvQi8WEg5UmAGMCAwEAAaNjMGEw
HQYDVR0OBBYEFDZh4QB8iAUJUYtEbEf/GkzJ6k8SMB8GA1UdIwQYMBaAFDZh4QB8iAUJUYtEbEf/
GkzJ6k8SMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgIEMA0GCSqGSIb3DQEBCwUAA4IC
AQBOMaBc8oumXb2voc7XCWnuXKhBBK3e2KMGz39t7lA3XXRe2ZLLAkLM5y3J7tURkf5a1SutfdOy
XAmeE6SRo83Uh6WszodmMkxK5GM4JGrnt4pBisu5igXEydaW7qq2CdC6DOGjG+mEkN8/TA6p3cno
L/sPyz6evdjLlSeJ8rFBH6xWyIZCbrcpYEJzXaUOEaxxXxgYz5/cTiVKN2M1G2okQBUIYSY6bjEL
4aUN5cfo7ogP3UvliEo3Eo0YgwuzR2v0KR6C1cZqZJSTnghIC/vAD32KdNQ+c3N+vl2OTsUVMC1G
iWkngNx1OO1+kXW+YTnnTUOtOIswUP/Vqd5SYgAImMAfY8U9/iIgkQj6T2W6FsScy94IN9fFhE1U
tzmLoBIuUFsVXJMTz+Jucth+IqoWFua9v1R93/k98p41pjtFX+H8DslVgfP097vju4KDlqN64xV1
grw3ZLl4CiOe/A91oeLm2UHOq6wn3esB4r2EIQKb6jTVGu5sYCcdWpXr0AUVqcABPdgL+H7qJguB
w09ojm6xNIrw2OocrDKsudk/okr/AwqEyPKw9WnMlQgLIKw1rODG2NvU9oR3GVGdMkUBZutL8VuF
kERQGt6vQ2OCw0sV47VMkuYbacK/xyZFiRcrPJPb41zgbQj9XAEyLKCHex0SdDrx+tWUDqG8At2J
HA==
-----END CERTIFICATE-----
`;
  const REAL_CHAIN = x509.PemConverter.decode(REAL_CHAIN_PEM).map((der) =>
    Buffer.from(der).toString('base64'),
  );
  const realKey = new x509.X509Certificate(REAL_CHAIN[0] as string).publicKey.rawData;
  const real = {
    chain: REAL_CHAIN,
    publicKey: Buffer.from(realKey).toString('base64'),
    challenge: Buffer.from('challenge'),
    now: new Date('2023-03-01T00:00:00Z'),
  };

  it("verify a real device's chain while its intermediates were valid", async () => {
    expect(REAL_CHAIN).toHaveLength(5);
    expect(REAL_CHAIN[4]).toBe(Buffer.from(blocks[3] as ArrayBuffer).toString('base64')); // the 2019 issue
    const google = loadAttestationRoots(pem);
    expect(await verifyAttestation({ ...real, roots: google })).toEqual({
      ok: true,
      securityLevel: 'TrustedEnvironment',
      attestationVersion: 200,
    });
    // Only the current issue of the RSA root: the chain's 2019 issue is anchored by its key.
    const current = loadAttestationRoots(x509.PemConverter.encode(blocks[0] as ArrayBuffer, 'CERTIFICATE'));
    expect(await verifyAttestation({ ...real, roots: current })).toMatchObject({ ok: true });
    // Only Key Attestation CA1: another root.
    const ca1 = loadAttestationRoots(x509.PemConverter.encode(blocks[1] as ArrayBuffer, 'CERTIFICATE'));
    expect(await verifyAttestation({ ...real, roots: ca1 })).toEqual({
      ok: false,
      reasons: [expect.any(String)],
      reason: 'The attestation chain does not end at a trusted root.',
    });
    expect(
      await verifyAttestation({ ...real, roots: google, now: new Date('2026-11-24T00:00:00Z') }),
    ).toEqual({
      ok: false,
      reasons: [expect.any(String)],
      reason: 'Certificate 2 of the attestation chain expired on 2023-03-24.',
    });
  });

  /** The sample's key description: Google's attestation example app on a locked phone with a Verified boot. */
  const sample: AttestationPolicy = {
    packageName: 'com.google.attestationexample',
    signatureDigests: ['68856d1d06f637d6255face5b224db43a9514ace538bb1548b844480fcd85c87'],
    revocations: null,
  };

  it("read a real device's root of trust and application id: accepted for its app, refused for another", async () => {
    const google = loadAttestationRoots(pem);
    expect(await verifyAttestation({ ...real, roots: google, policy: sample })).toMatchObject({ ok: true });
    expect(
      await verifyAttestation({
        ...real,
        roots: google,
        policy: {
          ...sample,
          packageName: TEST_AGENT.packageName,
          signatureDigests: [TEST_AGENT.signatureDigest],
        },
      }),
    ).toMatchObject({
      ok: false,
      reasons: [
        `The key was made by com.google.attestationexample, not by ${TEST_AGENT.packageName}.`,
        'The application that made the key is not signed with a configured signing certificate.',
      ],
    });
  });

  it("refuse a real device's chain once Google lists its batch key as revoked", async () => {
    // Droid CA2's serial is 0388266760658996860e; the list writes it without the leading zero.
    const revocations = {
      entries: parseRevocationList(
        '{"entries": {"388266760658996860e": {"status": "REVOKED", "reason": "CA_COMPROMISE"}}}',
      ),
    };
    expect(
      await verifyAttestation({
        ...real,
        roots: loadAttestationRoots(pem),
        policy: { ...sample, revocations },
      }),
    ).toMatchObject({
      ok: false,
      reasons: [
        'Certificate 4 of the attestation chain is on the revocation status list (REVOKED, CA_COMPROMISE).',
      ],
    });
  });
});
