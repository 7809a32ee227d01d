/**
 * The Device identity panel, rendered with the services (a fake API client and a session store holding a
 * session of each level), a query client and Mantine. The web project runs in Node with no DOM, so the
 * panel is rendered to HTML (react-dom/server, its identity fetched through the fake API first) and read
 * from it; the Approve/Reject steps are those the buttons run (`confirmAndDecide`), tested with the real
 * API call. e2e/identity.test.ts clicks the buttons in Chromium.
 */
import {
  type DeviceIdentity,
  ENROLLMENT_MESSAGES,
  LOGGED_IN,
  type ReregistrationRequest,
  type RuntimeConfig,
  type Session,
  type UserLevel,
} from '@lendlock/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { type ApiCallOptions, type ApiClient, ApiError } from '../../../api/client';
import { decideReregistration, deviceKeys, fetchDeviceIdentity } from '../../../api/devices';
import { ServicesProvider } from '../../../app/services';
import type { SessionStore } from '../../../app/session/store';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { formatLocalDateTime } from '../../../lib/datetime';
import { confirmAndDecide, DeviceIdentityPanel } from './DeviceIdentityPanel';

// useSession reads the store with useSyncExternalStore and no server snapshot, which server rendering
// refuses; here it reads the same store directly.
vi.mock('../../../app/session/useSession', async () => {
  const { useServices } = await import('../../../app/services');
  return { useSession: () => useServices().sessions.get() };
});

const IMEI = '356938035643809';

const request = (overrides: Partial<ReregistrationRequest> = {}): ReregistrationRequest => ({
  id: 7,
  imei1: IMEI,
  status: 'PENDING',
  address: '203.0.113.9',
  profile: {
    imei2: '356938035643817',
    manufacturer: 'Samsung Electronics',
    brand: 'Samsung',
    model: 'Galaxy A15',
    appversion: '3.2.1',
    apptype: 'DEVICE_OWNER',
    retailer_phone: '9876543210',
  },
  newKey: true,
  attempts: 3,
  createdAt: '2030-01-02T03:04:05.000Z',
  lastAttemptAt: '2030-01-02T04:00:00.000Z',
  decidedAt: null,
  decidedBy: null,
  approvedUntil: null,
  usedAt: null,
  ...overrides,
});

const identity = (overrides: Partial<DeviceIdentity> = {}): DeviceIdentity => ({
  status: 'success',
  imei1: IMEI,
  hasKey: true,
  keySecurityLevel: 'StrongBox',
  keyEnrolledAt: '2030-01-01T10:00:00.000Z',
  attestation: { passed: true, reasons: [], checkedAt: '2030-01-01T10:00:00.000Z' },
  requests: [],
  ...overrides,
});

/** A client that answers deviceIdentity with `answer` and a decision with `decided`, recording each call. */
function fakeApi(
  answer: DeviceIdentity,
  decided: () => unknown = () => ({ status: 'success', message: 'ok' }),
) {
  const calls: { script: string; body: unknown }[] = [];
  const call = vi.fn(async (script: string, options: ApiCallOptions<unknown> = {}) => {
    calls.push({ script, body: options.body });
    const body = script === 'v2/deviceIdentity' ? answer : decided();
    return options.parse ? options.parse(body) : body;
  });
  return { api: { call } as unknown as ApiClient, calls };
}

const session = (userlevel: UserLevel): Session => ({
  status: 'success',
  message: 'Login successful',
  expiry: '2099-01-01T00:00:00.000Z',
  token: 'token',
  email: `${userlevel.toLowerCase()}@lendlock.com`,
  userlevel,
  loggedin: LOGGED_IN,
  permissions: userlevel === 'USER' ? [{ id: 3, permission_name: 'deviceDetails' }] : [],
});

const sessionStore = (current: Session): SessionStore => ({
  get: () => current,
  subscribe: () => () => undefined,
  load: async () => current,
  save: async () => undefined,
  clear: () => undefined,
  end: () => undefined,
  ended: () => null,
});

/** The panel's HTML once its identity query has been answered by the fake API. */
async function renderPanel(answer: DeviceIdentity, level: UserLevel = 'ADMIN') {
  const { api, calls } = fakeApi(answer);
  const queryClient = new QueryClient();
  await queryClient.prefetchQuery({
    queryKey: deviceKeys.identity(IMEI),
    queryFn: () => fetchDeviceIdentity(api, IMEI),
  });
  const html = renderToStaticMarkup(
    <ServicesProvider services={{ config: {} as RuntimeConfig, sessions: sessionStore(session(level)), api }}>
      <MantineProvider>
        <QueryClientProvider client={queryClient}>
          <DeviceIdentityPanel imei={IMEI} />
        </QueryClientProvider>
      </MantineProvider>
    </ServicesProvider>,
  );
  return { html, calls };
}

const decode = (text: string) =>
  text
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
/** The text of an HTML fragment, its elements' texts separated by '|'. */
const textOf = (html: string) =>
  decode(html.replace(/<[^>]+>/g, '|'))
    .split('|')
    .map((part) => part.trim())
    .filter(Boolean)
    .join('|');
const byTestId = (html: string, id: string) =>
  new RegExp(`<[^>]*data-testid="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
/** Each body row of the requests table: the texts of its cells. */
const requestRows = (html: string) =>
  [...html.matchAll(/<tr[^>]*data-testid="registration-request-\d+"[^>]*>(.*?)<\/tr>/g)].map((row) =>
    (row[1] ?? '')
      .split(/<td[^>]*>/)
      .slice(1)
      .map(textOf),
  );
const buttonNames = (html: string) =>
  [...html.matchAll(/<button[^>]*aria-label="([^"]*)"/g)].map((match) => decode(match[1] ?? ''));

describe('DeviceIdentityPanel', () => {
  it('asks deviceIdentity for the IMEI and says an attested key and where it lives, and when it was enrolled', async () => {
    const { html, calls } = await renderPanel(identity());
    expect(calls).toEqual([{ script: 'v2/deviceIdentity', body: { imei: IMEI } }]);
    expect(html).toContain(`>${L.identityTitle}<`);
    expect(byTestId(html, 'identity-key')).toBe('Device key: attested (StrongBox)');
    expect(decode(byTestId(html, 'identity-key-enrolled') ?? '')).toBe(
      `Key enrolled ${formatLocalDateTime('2030-01-01T10:00:00.000Z')}`,
    );
    expect(byTestId(html, 'identity-no-requests')).toBe(L.requestsNone);
    expect(html).not.toContain('<table');
  });

  it.each([
    ['TrustedEnvironment' as const, 'Device key: attested (TrustedEnvironment)'],
    ['Software' as const, 'Device key: attested (Software)'],
    [null, 'Device key: not attested'],
  ])('key level %s: %s', async (keySecurityLevel, line) => {
    const { html } = await renderPanel(identity({ keySecurityLevel }));
    expect(byTestId(html, 'identity-key')).toBe(line);
  });

  it('says whether the attestation passed, and each check it failed', async () => {
    const when = formatLocalDateTime('2030-01-01T10:00:00.000Z');
    const passed = await renderPanel(identity());
    expect(decode(byTestId(passed.html, 'identity-attestation') ?? '')).toBe(
      `Attestation passed every check (${when})`,
    );
    expect(passed.html).not.toContain('identity-attestation-reasons');
    const reasons = [
      "The phone's bootloader is unlocked.",
      "The phone's verified boot state is Unverified, not Verified.",
    ];
    const failed = await renderPanel(
      identity({
        keySecurityLevel: null,
        attestation: { passed: false, reasons, checkedAt: '2030-01-01T10:00:00.000Z' },
      }),
    );
    expect(byTestId(failed.html, 'identity-key')).toBe('Device key: not attested');
    expect(decode(byTestId(failed.html, 'identity-attestation') ?? '')).toBe(`Attestation failed (${when}):`);
    const list = /data-testid="identity-attestation-reasons"[^>]*>(.*?)<\/ul>/.exec(failed.html)?.[1] ?? '';
    expect(textOf(list)).toBe(reasons.join('|'));
    // None sent: nothing said.
    const none = await renderPanel(identity({ keySecurityLevel: null, attestation: null }));
    expect(none.html).not.toContain('identity-attestation');
  });

  it('an agent from before device keys has none', async () => {
    const { html } = await renderPanel(
      identity({ hasKey: false, keySecurityLevel: null, keyEnrolledAt: null }),
    );
    expect(byTestId(html, 'identity-key')).toBe('No device key (an agent from before device keys)');
    expect(byTestId(html, 'identity-key-enrolled')).toBeUndefined();
  });

  const requests = [
    request(),
    request({
      id: 5,
      status: 'APPROVED',
      address: null,
      profile: { brand: 'Redmi', model: 'Note 13' },
      newKey: false,
      attempts: 1,
      createdAt: '2030-01-01T08:00:00.000Z',
      decidedAt: '2030-01-01T09:00:00.000Z',
      decidedBy: 'admin@lendlock.com',
      approvedUntil: '2030-01-02T09:00:00.000Z',
    }),
  ];

  it('lists the registration requests: when, from where, what they claim, new key, attempts, status', async () => {
    const { html } = await renderPanel(identity({ requests }), 'ADMIN');
    expect(html).toMatch(/<table[^>]*aria-label="Registration requests"/);
    expect(textOf(/<thead[^>]*>(.*?)<\/thead>/.exec(html)?.[1] ?? '')).toBe(
      'Requested|From address|Claims|New key|Attempts|Status|Decision',
    );
    const at = formatLocalDateTime;
    expect(requestRows(html)).toEqual([
      [
        `${at('2030-01-02T03:04:05.000Z')}|last ${at('2030-01-02T04:00:00.000Z')}`,
        '203.0.113.9',
        'Samsung Galaxy A15|IMEI 2: 356938035643817|Retailer phone: 9876543210',
        'Yes',
        '3',
        'PENDING',
        'Approve|Reject',
      ],
      [
        at('2030-01-01T08:00:00.000Z'),
        '—',
        'Redmi Note 13',
        'No',
        '1',
        `APPROVED|by admin@lendlock.com at ${at('2030-01-01T09:00:00.000Z')}|may register until ${at('2030-01-02T09:00:00.000Z')}`,
        '',
      ],
    ]);
  });

  it.each(['ADMIN', 'SUPERADMIN'] as const)(
    'an %s gets Approve and Reject on the pending request only',
    async (level) => {
      const { html } = await renderPanel(identity({ requests }), level);
      const when = formatLocalDateTime('2030-01-02T03:04:05.000Z');
      expect(buttonNames(html)).toEqual([
        `Approve the registration request of ${when}`,
        `Reject the registration request of ${when}`,
      ]);
    },
  );

  it('a USER with deviceDetails sees the requests but no Approve, Reject or Decision column', async () => {
    const { html } = await renderPanel(identity({ requests }), 'USER');
    expect(requestRows(html)).toHaveLength(2);
    expect(html).not.toContain('<button');
    expect(html).not.toContain(L.requestDecision);
    expect(requestRows(html)[0]?.at(-1)).toBe('PENDING');
  });
});

describe('Approve and Reject (confirmAndDecide)', () => {
  const steps = (answer: () => unknown) => {
    const { api, calls } = fakeApi(identity(), answer);
    return {
      calls,
      confirm: vi.fn<(question: string) => boolean>(),
      alert: vi.fn<(message: string) => void>(),
      refetch: vi.fn(async () => undefined),
      decide: (id: number, decision: 'approve' | 'reject') => decideReregistration(api, id, decision),
    };
  };
  const approved = ENROLLMENT_MESSAGES.approved(IMEI, '2030-01-03T03:04:05.000Z');

  it('a declined confirmation sends nothing', async () => {
    const s = steps(() => ({ status: 'success', message: approved }));
    s.confirm.mockReturnValue(false);
    await expect(confirmAndDecide(IMEI, request(), 'approve', s)).resolves.toBe(false);
    expect(s.confirm).toHaveBeenCalledWith(
      `Approve a new registration of ${IMEI}? The phone that registers next with the claimed key will take over this device.`,
    );
    expect(s.calls).toEqual([]);
    expect(s.alert).not.toHaveBeenCalled();
    expect(s.refetch).not.toHaveBeenCalled();
  });

  it('an accepted approval sends {id, decision} to reregistration/decide, alerts the message and refetches', async () => {
    const s = steps(() => ({ status: 'success', message: approved }));
    s.confirm.mockReturnValue(true);
    await expect(confirmAndDecide(IMEI, request(), 'approve', s)).resolves.toBe(true);
    expect(s.calls).toEqual([{ script: 'v2/reregistration/decide', body: { id: 7, decision: 'approve' } }]);
    expect(s.alert).toHaveBeenCalledExactlyOnceWith(approved);
    expect(s.refetch).toHaveBeenCalledOnce();
    expect(s.alert.mock.invocationCallOrder[0]).toBeLessThan(s.refetch.mock.invocationCallOrder[0] ?? 0);
  });

  it('a rejection asks its own question and sends reject', async () => {
    const s = steps(() => ({ status: 'success', message: ENROLLMENT_MESSAGES.rejected(IMEI) }));
    s.confirm.mockReturnValue(true);
    await confirmAndDecide(IMEI, request({ id: 9 }), 'reject', s);
    expect(s.confirm).toHaveBeenCalledWith(`Reject this registration request for ${IMEI}?`);
    expect(s.calls).toEqual([{ script: 'v2/reregistration/decide', body: { id: 9, decision: 'reject' } }]);
    expect(s.alert).toHaveBeenCalledExactlyOnceWith(`Registration request for ${IMEI} rejected.`);
  });

  it("a refusal alerts the server's own message and still refetches", async () => {
    const s = steps(() => {
      throw new ApiError(409, { code: 'CONFLICT', message: ENROLLMENT_MESSAGES.requestNotPending });
    });
    s.confirm.mockReturnValue(true);
    await confirmAndDecide(IMEI, request(), 'approve', s);
    expect(s.alert).toHaveBeenCalledExactlyOnceWith('This request is no longer pending.');
    expect(s.refetch).toHaveBeenCalledOnce();
  });
});
