/**
 * Android hardware key attestation: proof that the key a phone enrolls with (`publicKey`, EC P-256) lives
 * in its secure hardware. At registration the phone sends the certificate chain Android Keystore made
 * for that key (leaf first); the leaf carries the key description extension (OID 1.3.6.1.4.1.11129.2.1.17)
 * with the server's challenge and the security level. `verifyAttestation` checks the chain up to Google's
 * hardware attestation roots (attestation-roots.pem beside this file) and reads that extension.
 *
 * A pure module: no database, no network, no clock but `now`. It never throws for bad input; it answers
 * `{ ok: false, reason }` with one English sentence for the operator and the audit row.
 *
 * What it checks, in order, each failure with its own reason:
 *   1. the chain is 1 to 10 certificates, each valid base64 of a DER X.509 certificate;
 *   2. each certificate names the next as its issuer and is signed by it;
 *   3. the last one is one of the roots (by public key) or is signed by one of them;
 *   4. every certificate between the leaf and the root is within its validity period at `now`;
 *   5. the leaf's subject public key is `publicKey` (the SPKI DER bytes are compared);
 *   6. the leaf carries the key description, and no other certificate does;
 *   7. its attestationChallenge is `challenge`;
 * and it answers the attestationSecurityLevel (0 Software, 1 TrustedEnvironment, 2 StrongBox) and the
 * attestationVersion. Whether a Software level is acceptable is the caller's policy, not this module's.
 *
 * Leniency, only where Google's own verifier (github.com/android/keyattestation,
 * KeyAttestationCertPathValidator.kt) is lenient:
 *   - the leaf's validity is not checked: the device writes those dates itself (often 1970 to 2048, or
 *     a notBefore in the future on a phone whose clock is wrong);
 *   - the root's validity is not checked: a trust anchor is a public key (RFC 5280 §6.1.1), the chain is
 *     anchored by the root's key, and Google has re-issued its RSA root with the same key several times
 *     (the 2016 issue expired in May 2026; devices still send it);
 *   - basic constraints and key usage are not required of the intermediates: older devices' chains do not
 *     conform to RFC 5280, and Google's verifier does not require them either.
 * Google's verifier takes min(attestationSecurityLevel, keyMintSecurityLevel); this module answers the
 * attestationSecurityLevel (the two are equal on every real device).
 *
 * Out of scope: revocation lists. Google publishes the status of attestation keys it has revoked
 * (https://android.googleapis.com/attestation/status); it is not consulted here, so a chain under a
 * revoked batch key still verifies. Also out of scope: chains made with an app's own attestation key
 * (ATTEST_KEY), where two certificates carry the extension; they are refused, as Google's verifier does.
 */
import 'reflect-metadata'; // @peculiar/x509 (through tsyringe) needs the Reflect metadata API first.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NonStandardKeyDescription } from '@peculiar/asn1-android';
import { AsnConvert, AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(globalThis.crypto);

export type KeySecurityLevel = 'Software' | 'TrustedEnvironment' | 'StrongBox';

/** Google's hardware attestation roots (or a test's own), made by `loadAttestationRoots`. */
export interface AttestationRoots {
  /** How many root certificates were loaded. */
  readonly size: number;
}

export type AttestationOutcome =
  | { ok: true; securityLevel: KeySecurityLevel; attestationVersion: number }
  | { ok: false; reason: string };

export const KEY_DESCRIPTION_OID = '1.3.6.1.4.1.11129.2.1.17';
export const MAX_CHAIN_LENGTH = 10;

const SECURITY_LEVELS: readonly KeySecurityLevel[] = ['Software', 'TrustedEnvironment', 'StrongBox'];

/** The certificates behind each `AttestationRoots`, out of the callers' reach. */
const certificatesOf = new WeakMap<AttestationRoots, readonly x509.X509Certificate[]>();

/** The certificates of a PEM text; text outside the BEGIN/END lines (comments) is ignored. */
export function loadAttestationRoots(pemText: string): AttestationRoots {
  const blocks = [...pemText.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) throw new Error('The attestation roots file holds no PEM certificate.');
  const certificates = blocks.map((block, index) => {
    try {
      const certificate = new x509.X509Certificate(x509.PemConverter.decodeFirst(block[0]));
      void certificate.publicKey.algorithm; // Parses the key now rather than at the first verification.
      return certificate;
    } catch (error) {
      throw new Error(`Certificate ${index + 1} of the attestation roots file does not parse: ${error}`);
    }
  });
  const roots: AttestationRoots = Object.freeze({ size: certificates.length });
  certificatesOf.set(roots, certificates);
  return roots;
}

/**
 * The absolute path of attestation-roots.pem. The file lives beside this module's source, and the server
 * also runs as one esbuild bundle (apps/server/build.mjs), where `import.meta.url` is
 * apps/server/dist/main.js, not this file. So, as src/config.ts does with its repoRoot, the path is
 * resolved from where the code runs: beside this file when run from src (tsx, Vitest), and
 * ../src/modules/devices/ from apps/server/dist/ when run from the bundle.
 */
export function defaultAttestationRootsPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const fromSource = resolve(here, 'attestation-roots.pem');
  const fromBundle = resolve(here, '../src/modules/devices/attestation-roots.pem');
  return existsSync(fromSource) || !existsSync(fromBundle) ? fromSource : fromBundle;
}

/** A failed check; its message is the outcome's reason. */
class Refusal extends Error {}

export interface AttestationInput {
  /** Base64 DER certificates, leaf first, as the device sent them. */
  chain: string[];
  /** The SPKI DER, base64, of the key the device enrolls with. */
  publicKey: string;
  /** The server's nonce: the key must have been attested with exactly these bytes. */
  challenge: Buffer;
  roots: AttestationRoots;
  /** The time validity periods are checked at; the current time unless given. */
  now?: Date;
}

export async function verifyAttestation(input: AttestationInput): Promise<AttestationOutcome> {
  try {
    return await verify(input);
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message };
    return { ok: false, reason: 'The attestation could not be verified.' };
  }
}

async function verify(input: AttestationInput): Promise<AttestationOutcome> {
  const roots = certificatesOf.get(input.roots);
  if (!roots) throw new Refusal('No trusted attestation roots are loaded.');
  const now = input.now ?? new Date();
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) {
    throw new Refusal('The time to verify the attestation at is not a valid date.');
  }
  if (!(input.challenge instanceof Uint8Array)) {
    throw new Refusal('The server issued no attestation challenge.');
  }
  if (!Array.isArray(input.chain)) throw new Refusal('The attestation chain is not a list of certificates.');
  if (input.chain.length === 0) throw new Refusal('The attestation chain is empty.');
  if (input.chain.length > MAX_CHAIN_LENGTH) {
    throw new Refusal(`The attestation chain has more than ${MAX_CHAIN_LENGTH} certificates.`);
  }
  const certificates = input.chain.map(parseCertificate);
  const devicePublicKey = decodeBase64(input.publicKey);
  if (!devicePublicKey) throw new Refusal('The device public key is not valid base64.');

  // The path from the leaf up to, not including, the trust anchor. Devices send the root as the last
  // certificate; it is the anchor when its key is a trusted root's key.
  const last = certificates[certificates.length - 1] as x509.X509Certificate;
  const endsWithRoot =
    certificates.length > 1 &&
    sameName(last.subjectName, last.issuerName) &&
    roots.some((root) => sameKey(root, last));
  const path = endsWithRoot ? certificates.slice(0, -1) : certificates;

  for (let i = 0; i + 1 < path.length; i++) {
    const subject = path[i] as x509.X509Certificate;
    const issuer = path[i + 1] as x509.X509Certificate;
    if (!sameName(subject.issuerName, issuer.subjectName)) {
      throw new Refusal(
        `Certificate ${i + 1} of the attestation chain names an issuer other than certificate ${i + 2}.`,
      );
    }
    if (!(await signedBy(subject, issuer))) {
      throw new Refusal(
        `Certificate ${i + 1} of the attestation chain is not signed by certificate ${i + 2}.`,
      );
    }
  }
  const top = path[path.length - 1] as x509.X509Certificate;
  let anchored = false;
  for (const root of roots) {
    if (sameName(top.issuerName, root.subjectName) && (await signedBy(top, root))) {
      anchored = true;
      break;
    }
  }
  if (!anchored) throw new Refusal('The attestation chain does not end at a trusted root.');

  // Not the leaf (index 0) and not the anchor: see the header.
  for (let i = 1; i < path.length; i++) {
    const certificate = path[i] as x509.X509Certificate;
    if (now.getTime() > certificate.notAfter.getTime()) {
      throw new Refusal(
        `Certificate ${i + 1} of the attestation chain expired on ${day(certificate.notAfter)}.`,
      );
    }
    if (now.getTime() < certificate.notBefore.getTime()) {
      throw new Refusal(
        `Certificate ${i + 1} of the attestation chain is not valid before ${day(certificate.notBefore)}.`,
      );
    }
  }

  const leaf = path[0] as x509.X509Certificate;
  if (!Buffer.from(leaf.publicKey.rawData).equals(devicePublicKey)) {
    throw new Refusal('The attested key is not the device public key.');
  }
  const extensions = leaf.getExtensions(KEY_DESCRIPTION_OID);
  if (extensions.length === 0) {
    throw new Refusal('The leaf certificate has no Android key description extension.');
  }
  if (extensions.length > 1) throw new Refusal('The leaf certificate carries more than one key description.');
  if (certificates.slice(1).some((c) => c.getExtensions(KEY_DESCRIPTION_OID).length > 0)) {
    throw new Refusal(
      'A certificate other than the leaf carries a key description, so the chain may have been forged.',
    );
  }
  const description = parseKeyDescription((extensions[0] as x509.Extension).value);
  if (!description) throw new Refusal('The key description extension does not parse.');
  if (!Buffer.from(description.attestationChallenge.buffer).equals(Buffer.from(input.challenge))) {
    throw new Refusal('The attestation challenge is not the one the server issued.');
  }
  const securityLevel = SECURITY_LEVELS[description.attestationSecurityLevel];
  if (securityLevel === undefined) throw new Refusal('The key description has an unknown security level.');
  if (!Number.isSafeInteger(description.attestationVersion)) {
    throw new Refusal('The key description has an invalid attestation version.');
  }
  return { ok: true, securityLevel, attestationVersion: description.attestationVersion };
}

function parseCertificate(encoded: unknown, index: number): x509.X509Certificate {
  const der = typeof encoded === 'string' ? decodeBase64(encoded) : null;
  if (!der) throw new Refusal(`Certificate ${index + 1} of the attestation chain is not valid base64.`);
  try {
    const certificate = new x509.X509Certificate(der);
    void certificate.publicKey.algorithm;
    void certificate.notBefore;
    void certificate.extensions;
    return certificate;
  } catch {
    throw new Refusal(`Certificate ${index + 1} of the attestation chain is not a DER X.509 certificate.`);
  }
}

/** Standard or URL-safe base64, line breaks allowed (Android's Base64.DEFAULT wraps at 76 columns). */
function decodeBase64(text: string): Buffer | null {
  if (typeof text !== 'string') return null;
  const compact = text.replace(/\s+/g, '');
  if (compact.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact) || compact.length % 4 === 1) {
    return null;
  }
  return Buffer.from(compact, 'base64');
}

async function signedBy(certificate: x509.X509Certificate, issuer: x509.X509Certificate): Promise<boolean> {
  try {
    return await certificate.verify({ publicKey: issuer.publicKey, signatureOnly: true });
  } catch {
    return false;
  }
}

function sameKey(a: x509.X509Certificate, b: x509.X509Certificate): boolean {
  return Buffer.from(a.publicKey.rawData).equals(Buffer.from(b.publicKey.rawData));
}

/** Names compare by their string form, so a PrintableString and a UTF8String of one value are equal. */
function sameName(a: x509.Name, b: x509.Name): boolean {
  return a.toString().toLowerCase() === b.toString().toLowerCase();
}

function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * The head of a KeyDescription, for descriptions whose authorization lists carry a tag newer than
 * @peculiar/asn1-android knows (each KeyMint version adds some): the fields read here come first and
 * have not changed since attestation version 1. The schema is declared with asn1-schema's decorator
 * functions called directly.
 */
class KeyDescriptionHead {
  attestationVersion = 0;
  attestationSecurityLevel = 0;
  keymasterVersion = 0;
  keymasterSecurityLevel = 0;
  attestationChallenge = new OctetString();
  uniqueId = new OctetString();
  softwareEnforced: ArrayBuffer = new ArrayBuffer(0);
  teeEnforced: ArrayBuffer = new ArrayBuffer(0);
}
AsnType({ type: AsnTypeTypes.Sequence })(KeyDescriptionHead);
for (const [property, type] of [
  ['attestationVersion', AsnPropTypes.Integer],
  ['attestationSecurityLevel', AsnPropTypes.Enumerated],
  ['keymasterVersion', AsnPropTypes.Integer],
  ['keymasterSecurityLevel', AsnPropTypes.Enumerated],
  ['attestationChallenge', OctetString],
  ['uniqueId', OctetString],
  ['softwareEnforced', AsnPropTypes.Any],
  ['teeEnforced', AsnPropTypes.Any],
] as const) {
  AsnProp({ type })(KeyDescriptionHead.prototype, property);
}

interface ParsedKeyDescription {
  attestationVersion: number;
  attestationSecurityLevel: number;
  attestationChallenge: OctetString;
}

/** @peculiar/asn1-android's schema first (it accepts unordered lists); the head alone if that fails. */
function parseKeyDescription(der: ArrayBuffer): ParsedKeyDescription | null {
  const schemas: (new () => ParsedKeyDescription)[] = [NonStandardKeyDescription, KeyDescriptionHead];
  for (const schema of schemas) {
    try {
      return AsnConvert.parse(der, schema);
    } catch {
      // The next schema.
    }
  }
  return null;
}
