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
 * then what the attestation says of the phone and the app, every failing rule listed:
 *   8. the key was attested, and lives, in secure hardware: neither attestationSecurityLevel nor
 *      keymasterSecurityLevel is Software;
 *   9. the hardware-enforced list carries a RootOfTrust with `deviceLocked` true (a locked bootloader) and
 *      `verifiedBootState` Verified (the phone runs the manufacturer's signed system);
 *  10. with a policy naming them, the attestationApplicationId names the agent's package and only the
 *      configured signing certificate digests (SHA-256);
 *  11. with a revocation status list (Google's format, see attestation-status.ts), no certificate of the
 *      chain has its serial number on it, and an unreadable list refuses every chain.
 * It answers the attestationSecurityLevel (1 TrustedEnvironment, 2 StrongBox) and the
 * attestationVersion; a refusal answers each failing rule's sentence in `reasons` and all of them, joined,
 * in `reason`.
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
 * Out of scope: chains made with an app's own attestation key (ATTEST_KEY), where two certificates
 * carry the extension; they are refused, as Google's verifier does.
 */
import 'reflect-metadata'; // @peculiar/x509 (through tsyringe) needs the Reflect metadata API first.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KeyAttestation } from '@lendlock/contract';
import { AttestationApplicationId, RootOfTrust, VerifiedBootState } from '@peculiar/asn1-android';
import { AsnConvert, AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import * as x509 from '@peculiar/x509';
import { type RevocationStatus, serialKey } from './attestation-status';

x509.cryptoProvider.set(globalThis.crypto);

export type KeySecurityLevel = 'Software' | 'TrustedEnvironment' | 'StrongBox';

/** Google's hardware attestation roots (or a test's own), made by `loadAttestationRoots`. */
export interface AttestationRoots {
  /** How many root certificates were loaded. */
  readonly size: number;
}

export type AttestationOutcome =
  | { ok: true; securityLevel: KeySecurityLevel; attestationVersion: number }
  | { ok: false; reason: string; reasons: string[] };

/** What the app that made the key must be, and the keys Google revoked. */
export interface AttestationPolicy {
  /** The agent's package name; null: not checked. */
  packageName: string | null;
  /** The SHA-256 digests (hex) of the agent's signing certificates; empty: not checked. */
  signatureDigests: readonly string[];
  /** The revocation status list; null: not consulted. */
  revocations: RevocationStatus | null;
}

/** The digest as compared: lowercase hex, without separators (`AB:CD…` as keytool prints it is accepted). */
function digestKey(digest: string): string {
  return digest.replace(/[\s:]/g, '').toLowerCase();
}

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

/** What Device Details shows of an outcome: whether it passed and, if not, every reason. */
export function attestationVerdict(outcome: AttestationOutcome, at: Date = new Date()): KeyAttestation {
  return outcome.ok
    ? { passed: true, reasons: [], checkedAt: at.toISOString() }
    : {
        passed: false,
        reasons: outcome.reasons.length > 0 ? outcome.reasons : [outcome.reason],
        checkedAt: at.toISOString(),
      };
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
  /** The app and revocation checks; none of them unless given. */
  policy?: AttestationPolicy;
}

export async function verifyAttestation(input: AttestationInput): Promise<AttestationOutcome> {
  let reasons: string[];
  try {
    const outcome = await verify(input);
    if (outcome.ok) return outcome;
    reasons = outcome.reasons;
  } catch (error) {
    reasons = [error instanceof Refusal ? error.message : 'The attestation could not be verified.'];
  }
  return { ok: false, reason: reasons.join(' '), reasons };
}

async function verify(
  input: AttestationInput,
): Promise<Extract<AttestationOutcome, { ok: true }> | { ok: false; reasons: string[] }> {
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
  const keymasterLevel = SECURITY_LEVELS[description.keymasterSecurityLevel];
  if (securityLevel === undefined || keymasterLevel === undefined) {
    throw new Refusal('The key description has an unknown security level.');
  }
  if (!Number.isSafeInteger(description.attestationVersion)) {
    throw new Refusal('The key description has an invalid attestation version.');
  }
  const reasons = [
    ...hardwareReasons(securityLevel, keymasterLevel, description.rootOfTrust),
    ...applicationReasons(description.applicationId, input.policy),
    ...revocationReasons(certificates, input.policy?.revocations ?? null),
  ];
  if (reasons.length > 0) return { ok: false, reasons };
  return { ok: true, securityLevel, attestationVersion: description.attestationVersion };
}

const BOOT_STATES: Record<number, string> = {
  [VerifiedBootState.verified]: 'Verified',
  [VerifiedBootState.selfSigned]: 'SelfSigned',
  [VerifiedBootState.unverified]: 'Unverified',
  [VerifiedBootState.failed]: 'Failed',
};

/** Rules 8 and 9: secure hardware, a locked bootloader, a verified boot. */
function hardwareReasons(
  securityLevel: KeySecurityLevel,
  keymasterLevel: KeySecurityLevel,
  rootOfTrust: RootOfTrust | null,
): string[] {
  const reasons: string[] = [];
  if (securityLevel === 'Software') {
    reasons.push('The key was attested by software (security level Software), not by secure hardware.');
  }
  if (keymasterLevel === 'Software') {
    reasons.push('The key is kept by software (keymaster security level Software), not by secure hardware.');
  }
  if (!rootOfTrust) {
    reasons.push('The attestation carries no hardware-enforced root of trust (bootloader and boot state).');
    return reasons;
  }
  if (rootOfTrust.deviceLocked !== true) reasons.push("The phone's bootloader is unlocked.");
  if (rootOfTrust.verifiedBootState !== VerifiedBootState.verified) {
    const state = BOOT_STATES[rootOfTrust.verifiedBootState] ?? String(rootOfTrust.verifiedBootState);
    reasons.push(`The phone's verified boot state is ${state}, not Verified.`);
  }
  return reasons;
}

/** Rule 10: the agent's package, signed with the agent's certificates. */
function applicationReasons(
  applicationId: AttestationApplicationId | null,
  policy: AttestationPolicy | undefined,
): string[] {
  const wanted = policy?.packageName ?? null;
  const digests = new Set((policy?.signatureDigests ?? []).map(digestKey));
  if (wanted === null && digests.size === 0) return [];
  if (!applicationId) return ['The attestation does not name the application that made the key.'];
  const reasons: string[] = [];
  const names = applicationId.packageInfos.map((info) => bytesOf(info.packageName).toString('utf8'));
  if (wanted !== null && !names.includes(wanted)) {
    reasons.push(`The key was made by ${names.join(', ') || 'no named package'}, not by ${wanted}.`);
  }
  if (digests.size > 0) {
    const signed = applicationId.signatureDigests.map((digest) => bytesOf(digest).toString('hex'));
    if (signed.length === 0 || signed.some((digest) => !digests.has(digest))) {
      reasons.push('The application that made the key is not signed with a configured signing certificate.');
    }
  }
  return reasons;
}

/** The schema declares these OCTET STRINGs as OctetString; the parser answers them as ArrayBuffers. */
function bytesOf(value: OctetString | ArrayBuffer): Buffer {
  return Buffer.from(value instanceof ArrayBuffer ? value : value.buffer);
}

/** Rule 11: no certificate of the chain is on the revocation status list. */
function revocationReasons(
  certificates: readonly x509.X509Certificate[],
  revocations: RevocationStatus | null,
): string[] {
  if (revocations === null) return [];
  if ('problem' in revocations) return [revocations.problem];
  return certificates.flatMap((certificate, index) => {
    const entry = revocations.entries.get(serialKey(certificate.serialNumber));
    if (!entry) return [];
    const why = [entry.status, entry.reason].filter(Boolean).join(', ');
    return [`Certificate ${index + 1} of the attestation chain is on the revocation status list (${why}).`];
  });
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
 * The head of a KeyDescription, whatever tags its authorization lists carry (each KeyMint version adds
 * some): the fields read here come first and have not changed since attestation version 1; the two lists
 * are kept as DER. The schema is declared with asn1-schema's decorator functions called directly.
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
  keymasterSecurityLevel: number;
  attestationChallenge: OctetString;
  /** From the hardware-enforced list only: a software-enforced root of trust vouches for nothing. */
  rootOfTrust: RootOfTrust | null;
  /** From either list (Android writes it in the software-enforced one). */
  applicationId: AttestationApplicationId | null;
}

/** The context-specific tags of the authorization list entries read here (KeyMint's Tag numbers). */
const ROOT_OF_TRUST_TAG = 704;
const APPLICATION_ID_TAG = 709;

/**
 * The fields every version has; the two authorization lists are walked for the root of trust and the
 * application id, so a tag newer than @peculiar/asn1-android knows does not hide them.
 */
function parseKeyDescription(der: ArrayBuffer): ParsedKeyDescription | null {
  let head: KeyDescriptionHead;
  try {
    head = AsnConvert.parse(der, KeyDescriptionHead);
  } catch {
    return null;
  }
  const rootOfTrust = entryOf(head.teeEnforced, ROOT_OF_TRUST_TAG);
  const applicationId =
    entryOf(head.softwareEnforced, APPLICATION_ID_TAG) ?? entryOf(head.teeEnforced, APPLICATION_ID_TAG);
  return {
    attestationVersion: head.attestationVersion,
    attestationSecurityLevel: head.attestationSecurityLevel,
    keymasterSecurityLevel: head.keymasterSecurityLevel,
    attestationChallenge: head.attestationChallenge,
    rootOfTrust: rootOfTrust ? AsnConvert.parse(rootOfTrust, RootOfTrust) : null,
    applicationId: applicationId
      ? AsnConvert.parse(AsnConvert.parse(applicationId, OctetString).buffer, AttestationApplicationId)
      : null,
  };
}

/**
 * The content of the explicitly tagged entry `[tag]` of an AuthorizationList (a DER SEQUENCE), or null.
 * Throws on malformed DER (the caller answers that the attestation could not be verified).
 */
function entryOf(list: ArrayBuffer, tag: number): Uint8Array | null {
  const bytes = new Uint8Array(list);
  const outer = readElement(bytes, 0);
  if (outer.tag !== 0x30 || outer.end !== bytes.length)
    throw new Error('An authorization list is not a SEQUENCE.');
  for (let at = outer.contentStart; at < outer.end; ) {
    const element = readElement(bytes, at);
    if (element.contextTag === tag) return bytes.slice(element.contentStart, element.end);
    at = element.end;
  }
  return null;
}

/** One DER element at `at`: its first tag byte, its context-specific tag number, where its content lies. */
function readElement(bytes: Uint8Array, at: number) {
  let index = at;
  const first = byteAt(bytes, index++);
  let number = first & 0x1f;
  if (number === 0x1f) {
    number = 0;
    let next: number;
    do {
      next = byteAt(bytes, index++);
      number = number * 128 + (next & 0x7f);
    } while (next & 0x80);
  }
  let length = byteAt(bytes, index++);
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new Error('Unsupported DER length.');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + byteAt(bytes, index++);
  }
  const end = index + length;
  if (end > bytes.length) throw new Error('A DER element runs past its container.');
  return { tag: first, contextTag: (first & 0xc0) === 0x80 ? number : -1, contentStart: index, end };
}

function byteAt(bytes: Uint8Array, index: number): number {
  const value = bytes[index];
  if (value === undefined) throw new Error('The DER ends early.');
  return value;
}
