/**
 * Android key attestation chains for tests, made here rather than on a phone: a root CA of the test's
 * own (ECDSA P-256 or RSA), an intermediate (the "batch" attestation key a device's secure hardware
 * holds) and a leaf for the device key that carries the key description extension
 * (OID 1.3.6.1.4.1.11129.2.1.17) with the challenge and security level the test chooses. The chain comes
 * as a device sends it: base64 DER, leaf first, root last; `rootPem` is what `loadAttestationRoots` takes.
 *
 *   const root = await createTestRoot();
 *   const { chain, rootPem } =
 *     await buildAttestation({ publicKey, challenge, securityLevel: 'StrongBox', root });
 *   await verifyAttestation({ chain, publicKey, challenge, roots: loadAttestationRoots(rootPem) });
 */
import 'reflect-metadata'; // @peculiar/x509 needs the Reflect metadata API before it loads.
import { KeyObject, type webcrypto } from 'node:crypto';
import {
  AttestationApplicationId,
  AttestationPackageInfo,
  AuthorizationList,
  IntegerSet,
  KeyMintKeyDescription,
  RootOfTrust,
  SecurityLevel,
  VerifiedBootState,
  Version,
} from '@peculiar/asn1-android';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import * as x509 from '@peculiar/x509';
import { KEY_DESCRIPTION_OID, type KeySecurityLevel } from '../src/modules/devices/attestation';

x509.cryptoProvider.set(globalThis.crypto);
const subtle = globalThis.crypto.subtle;

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const DAY = 24 * 60 * 60 * 1000;
/** The dates Android Keystore writes in attestation leaves when the app sets none. */
export const ANDROID_LEAF_VALIDITY = {
  notBefore: new Date('1970-01-01T00:00:00Z'),
  notAfter: new Date('2048-01-01T00:00:00Z'),
};
export const LEAF_SUBJECT = 'CN=Android Keystore Key';

const LEVELS: Record<KeySecurityLevel, SecurityLevel> = {
  Software: SecurityLevel.software,
  TrustedEnvironment: SecurityLevel.trustedEnvironment,
  StrongBox: SecurityLevel.strongBox,
};

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const RSA_2048 = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};

/** The agent's package and signing certificate digest the test chains name unless told otherwise. */
export const TEST_AGENT = {
  packageName: 'com.lendlock.agent',
  signatureDigest: 'a1'.repeat(32),
};

/** A certificate authority of a test: its certificate and the private key it signs with. */
export interface TestCa {
  certificate: x509.X509Certificate;
  privateKey: CryptoKey;
  /** The certificate as base64 DER, as it appears in a chain. */
  base64: string;
  /** The certificate in PEM. */
  pem: string;
}

export type TestRoot = TestCa;

export interface Validity {
  notBefore: Date;
  notAfter: Date;
}

function toTestCa(certificate: x509.X509Certificate, privateKey: CryptoKey): TestCa {
  return {
    certificate,
    privateKey,
    base64: Buffer.from(certificate.rawData).toString('base64'),
    pem: certificate.toString('pem'),
  };
}

let serial = 0;
function nextSerial(): string {
  serial += 1;
  return `${Date.now().toString(16)}${serial.toString(16).padStart(4, '0')}`;
}

/** A self-signed root CA, valid from yesterday for 20 years (or as given). */
export async function createTestRoot(
  options: { algorithm?: 'ECDSA' | 'RSA'; name?: string; validity?: Validity } = {},
): Promise<TestRoot> {
  const algorithm = options.algorithm === 'RSA' ? RSA_2048 : EC_P256;
  const keys = (await subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: nextSerial(),
    name: options.name ?? 'CN=LendLock Test Attestation Root, O=LendLock Tests',
    notBefore: options.validity?.notBefore ?? new Date(now - DAY),
    notAfter: options.validity?.notAfter ?? new Date(now + 20 * 365 * DAY),
    signingAlgorithm: algorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  return toTestCa(certificate, keys.privateKey);
}

/** An intermediate CA under `issuer` (a device's batch attestation key), valid from yesterday for a year. */
export async function createTestIntermediate(
  issuer: TestCa,
  options: { name?: string; validity?: Validity } = {},
): Promise<TestCa> {
  const keys = (await subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: nextSerial(),
    subject: options.name ?? 'CN=LendLock Test Attestation Key, O=TEE',
    issuer: issuer.certificate.subjectName,
    notBefore: options.validity?.notBefore ?? new Date(now - DAY),
    notAfter: options.validity?.notAfter ?? new Date(now + 365 * DAY),
    publicKey: keys.publicKey,
    signingKey: issuer.privateKey,
    signingAlgorithm: signingAlgorithmOf(issuer),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    ],
  });
  return toTestCa(certificate, keys.privateKey);
}

function signingAlgorithmOf(ca: TestCa): webcrypto.Algorithm | webcrypto.EcdsaParams {
  return ca.privateKey.algorithm.name === 'ECDSA' ? EC_P256 : RSA_2048;
}

/** The DER bytes of an SPKI given as a KeyObject or base64. */
export function spkiOf(publicKey: KeyObject | string): Buffer {
  return publicKey instanceof KeyObject
    ? publicKey.export({ type: 'spki', format: 'der' })
    : Buffer.from(publicKey, 'base64');
}

/** A challenge string stands for its UTF-8 bytes. */
function bytesOf(challenge: Buffer | string): Buffer {
  return typeof challenge === 'string' ? Buffer.from(challenge, 'utf8') : challenge;
}

/**
 * The DER value of a key description extension, as KeyMint writes it for a P-256 signing key: the
 * authorization list goes to hardwareEnforced unless the level is Software.
 */
export function encodeKeyDescription(options: {
  challenge: Buffer | string;
  securityLevel: KeySecurityLevel;
  /** keyMintSecurityLevel; the same as `securityLevel` unless given. */
  keymasterSecurityLevel?: KeySecurityLevel;
  /** 300 (KeyMint 3, Android 14) unless given. */
  attestationVersion?: number;
  /** A locked bootloader and a Verified boot unless given; null leaves the RootOfTrust out. */
  rootOfTrust?: { deviceLocked: boolean; verifiedBootState: VerifiedBootState } | null;
  /** TEST_AGENT's package and digest unless given; null leaves the attestationApplicationId out. */
  application?: { packageNames: string[]; signatureDigests: string[] } | null;
}): Buffer {
  const securityLevel = LEVELS[options.securityLevel];
  const keyMintSecurityLevel = LEVELS[options.keymasterSecurityLevel ?? options.securityLevel];
  const keyProperties = new AuthorizationList({
    purpose: new IntegerSet([2]), // SIGN
    algorithm: 3, // EC
    keySize: 256,
    digest: new IntegerSet([4]), // SHA-2 256
    ecCurve: 1, // P-256
    noAuthRequired: null,
    origin: 0, // GENERATED
    ...(options.rootOfTrust === null
      ? {}
      : {
          rootOfTrust: new RootOfTrust({
            verifiedBootKey: new OctetString(Buffer.alloc(32, 7)),
            deviceLocked: options.rootOfTrust?.deviceLocked ?? true,
            verifiedBootState: options.rootOfTrust?.verifiedBootState ?? VerifiedBootState.verified,
            verifiedBootHash: new OctetString(Buffer.alloc(32, 9)),
          }),
        }),
    osVersion: 140000,
    osPatchLevel: 202601,
  });
  const application =
    options.application === undefined
      ? { packageNames: [TEST_AGENT.packageName], signatureDigests: [TEST_AGENT.signatureDigest] }
      : options.application;
  const applicationId = application
    ? new OctetString(
        AsnConvert.serialize(
          new AttestationApplicationId({
            packageInfos: application.packageNames.map(
              (name) =>
                new AttestationPackageInfo({ packageName: new OctetString(Buffer.from(name)), version: 1 }),
            ),
            signatureDigests: application.signatureDigests.map(
              (digest) => new OctetString(Buffer.from(digest, 'hex')),
            ),
          }),
        ),
      )
    : undefined;
  const software = securityLevel === SecurityLevel.software;
  const description = new KeyMintKeyDescription({
    attestationVersion: options.attestationVersion ?? Version.keyMint3,
    attestationSecurityLevel: securityLevel,
    keyMintVersion: options.attestationVersion ?? Version.keyMint3,
    keyMintSecurityLevel,
    attestationChallenge: new OctetString(bytesOf(options.challenge)),
    uniqueId: new OctetString(Buffer.alloc(0)),
    softwareEnforced: software
      ? Object.assign(keyProperties, applicationId ? { attestationApplicationId: applicationId } : {})
      : new AuthorizationList({
          creationDateTime: Date.now(),
          ...(applicationId ? { attestationApplicationId: applicationId } : {}),
        }),
    hardwareEnforced: software ? new AuthorizationList() : keyProperties,
  });
  return Buffer.from(AsnConvert.serialize(description));
}

/**
 * A leaf certificate for `publicKey` signed by `issuer`. `keyDescription` is the extension's DER value
 * (see encodeKeyDescription), or null for a leaf without it; an array puts the extension in several times.
 */
export async function issueLeaf(options: {
  issuer: { name: string | x509.Name; privateKey: CryptoKey };
  publicKey: KeyObject | string;
  keyDescription: Buffer | Buffer[] | null;
  subject?: string;
  validity?: Validity;
}): Promise<string> {
  const descriptions =
    options.keyDescription === null
      ? []
      : Array.isArray(options.keyDescription)
        ? options.keyDescription
        : [options.keyDescription];
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '01',
    subject: options.subject ?? LEAF_SUBJECT,
    issuer: options.issuer.name,
    notBefore: options.validity?.notBefore ?? ANDROID_LEAF_VALIDITY.notBefore,
    notAfter: options.validity?.notAfter ?? ANDROID_LEAF_VALIDITY.notAfter,
    publicKey: new x509.PublicKey(spkiOf(options.publicKey)),
    signingKey: options.issuer.privateKey,
    signingAlgorithm: options.issuer.privateKey.algorithm.name === 'ECDSA' ? EC_P256 : RSA_2048,
    extensions: [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ...descriptions.map((value) => new x509.Extension(KEY_DESCRIPTION_OID, false, value)),
    ],
  });
  return Buffer.from(leaf.rawData).toString('base64');
}

export interface BuiltAttestation {
  /** Base64 DER certificates, leaf first: leaf, intermediate, and the root unless `includeRoot` is false. */
  chain: string[];
  /** The root certificate in PEM, for loadAttestationRoots. */
  rootPem: string;
  root: TestRoot;
  intermediate: TestCa;
}

/** A whole attestation chain for `publicKey` (an SPKI as a KeyObject or base64 DER). */
export async function buildAttestation(options: {
  publicKey: KeyObject | string;
  /** The attestationChallenge; a string stands for its UTF-8 bytes. */
  challenge: Buffer | string;
  securityLevel: KeySecurityLevel;
  /** A new ECDSA root unless given (pass one to build several chains under one root). */
  root?: TestRoot;
  /** A new intermediate under the root unless given. */
  intermediate?: TestCa;
  keymasterSecurityLevel?: KeySecurityLevel;
  attestationVersion?: number;
  /** See encodeKeyDescription. */
  rootOfTrust?: { deviceLocked: boolean; verifiedBootState: VerifiedBootState } | null;
  /** See encodeKeyDescription. */
  application?: { packageNames: string[]; signatureDigests: string[] } | null;
  /** Replaces the key description extension's value; null leaves the extension out. */
  keyDescription?: Buffer | null;
  /** Devices send the root as the last certificate; false leaves it out. */
  includeRoot?: boolean;
  intermediateValidity?: Validity;
  leafValidity?: Validity;
}): Promise<BuiltAttestation> {
  const root = options.root ?? (await createTestRoot());
  const intermediate =
    options.intermediate ??
    (await createTestIntermediate(
      root,
      options.intermediateValidity ? { validity: options.intermediateValidity } : {},
    ));
  const keyDescription =
    options.keyDescription !== undefined
      ? options.keyDescription
      : encodeKeyDescription({
          challenge: options.challenge,
          securityLevel: options.securityLevel,
          ...(options.keymasterSecurityLevel
            ? { keymasterSecurityLevel: options.keymasterSecurityLevel }
            : {}),
          ...(options.attestationVersion ? { attestationVersion: options.attestationVersion } : {}),
          ...(options.rootOfTrust !== undefined ? { rootOfTrust: options.rootOfTrust } : {}),
          ...(options.application !== undefined ? { application: options.application } : {}),
        });
  const leaf = await issueLeaf({
    issuer: { name: intermediate.certificate.subjectName, privateKey: intermediate.privateKey },
    publicKey: options.publicKey,
    keyDescription,
    ...(options.leafValidity ? { validity: options.leafValidity } : {}),
  });
  const chain = [leaf, intermediate.base64, ...(options.includeRoot === false ? [] : [root.base64])];
  return { chain, rootPem: root.pem, root, intermediate };
}
