/**
 * Collections on autopilot (docs/features.md § Collections on autopilot), under `v2/collections/`: the
 * lender's policy and its versions, the plan of a day (the dry run of an unsaved policy, Today's Plan)
 * and its CSV, the kill switch, per-device holds and failed automated actions, the release approval
 * queue and the daily runs. Every answer is parsed with the contract's schema; every query key names
 * every parameter its fetch sends.
 */
import {
  type CollectionsPolicy,
  type CollectionsRun,
  decideReleaseResponseSchema,
  type FailedAction,
  getCollectionsPolicyResponseSchema,
  getKillSwitchResponseSchema,
  type Hold,
  listFailuresResponseSchema,
  listHoldsResponseSchema,
  listPolicyVersionsResponseSchema,
  listReleasesResponseSchema,
  listRunsResponseSchema,
  type PlanRequest,
  type PlanResponse,
  planFileName,
  planResponseSchema,
  putCollectionsPolicyResponseSchema,
  putHoldResponseSchema,
  putKillSwitchResponseSchema,
  type ReleaseRequest,
  statusMessageSchema,
} from '@lendlock/contract';
import type { z } from 'zod';
import type { ApiClient, DownloadedFile, FileCallOptions } from './client';

const BASE = 'v2/collections';

export type PlanFilter = NonNullable<PlanRequest['filter']>;
export type ReleaseState = ReleaseRequest['state'];

/** The plan asked for: a day (null: today in the policy's zone) and an unsaved policy (null: the saved one). */
export interface PlanQuery {
  date: string | null;
  policy: CollectionsPolicy | null;
  filter: PlanFilter;
}

/** Items per page of a plan. */
export const PLAN_PAGE_SIZE = 200;

export const collectionKeys = {
  all: ['collections'] as const,
  policy: () => [...collectionKeys.all, 'policy'] as const,
  versions: () => [...collectionKeys.all, 'policy', 'versions'] as const,
  /** A plan's pages (the cursor is the page parameter); the policy is part of the key, field by field. */
  plan: (query: PlanQuery, limit: number) =>
    [...collectionKeys.all, 'plan', query.date, query.policy, query.filter, limit] as const,
  killSwitch: () => [...collectionKeys.all, 'killSwitch'] as const,
  /** Every hold (null), or one device's (either of its IMEIs). */
  holds: (imei: string | null) => [...collectionKeys.all, 'holds', imei] as const,
  /** One device's automated actions retrying or given up (its IMEI 1). */
  failures: (imei: string) => [...collectionKeys.all, 'failures', imei] as const,
  releases: (state: ReleaseState) => [...collectionKeys.all, 'releases', state] as const,
  runs: () => [...collectionKeys.all, 'runs'] as const,
};

const withSignal = (signal: AbortSignal | undefined) => (signal ? { signal } : {});

export type PolicyVersion = z.infer<typeof getCollectionsPolicyResponseSchema>;

export function fetchPolicy(api: ApiClient, signal?: AbortSignal): Promise<PolicyVersion> {
  return api.call(`${BASE}/policy`, {
    parse: (body) => getCollectionsPolicyResponseSchema.parse(body),
    ...withSignal(signal),
  });
}

/** SUPERADMIN: the whole policy; the server saves a new version when it differs from the current one. */
export function savePolicy(
  api: ApiClient,
  policy: CollectionsPolicy,
): Promise<z.infer<typeof putCollectionsPolicyResponseSchema>> {
  return api.call(`${BASE}/policy`, {
    method: 'PUT',
    body: { policy },
    parse: (body) => putCollectionsPolicyResponseSchema.parse(body),
  });
}

export type PolicyHistoryItem = z.infer<typeof listPolicyVersionsResponseSchema>['items'][number];

export function listPolicyVersions(api: ApiClient, signal?: AbortSignal): Promise<PolicyHistoryItem[]> {
  return api
    .call(`${BASE}/policy/versions`, {
      parse: (body) => listPolicyVersionsResponseSchema.parse(body),
      ...withSignal(signal),
    })
    .then((reply) => reply.items);
}

/** The body of a plan call: only what is asked (no date: today; no policy: the saved one). */
function planBody(query: PlanQuery) {
  return {
    ...(query.date ? { date: query.date } : {}),
    ...(query.policy ? { policy: query.policy } : {}),
    filter: query.filter,
  };
}

/** One page of the plan: `cursor` from the previous page's answer gives the next. */
export function fetchPlan(
  api: ApiClient,
  request: PlanQuery & { limit: number; cursor: string | null },
  signal?: AbortSignal,
): Promise<PlanResponse> {
  return api.call(`${BASE}/plan`, {
    method: 'POST',
    body: {
      ...planBody(request),
      limit: request.limit,
      ...(request.cursor ? { cursor: request.cursor } : {}),
    },
    parse: (body) => planResponseSchema.parse(body),
    ...withSignal(signal),
  });
}

/** Every item of the plan as the server's CSV (`collections-plan_{date}.csv`). */
export function exportPlan(
  api: ApiClient,
  query: PlanQuery & { fallbackDate: string },
  options: Omit<FileCallOptions, 'fallbackName' | 'body'> = {},
): Promise<DownloadedFile> {
  return api.file(`${BASE}/plan/export`, {
    ...options,
    body: planBody(query),
    fallbackName: planFileName(query.date ?? query.fallbackDate),
  });
}

export type KillSwitchState = z.infer<typeof getKillSwitchResponseSchema>;

export function fetchKillSwitch(api: ApiClient, signal?: AbortSignal): Promise<KillSwitchState> {
  return api.call(`${BASE}/kill-switch`, {
    parse: (body) => getKillSwitchResponseSchema.parse(body),
    ...withSignal(signal),
  });
}

/** On (ADMIN, SUPERADMIN): stops every automated action; off: SUPERADMIN only. A reason either way. */
export function setKillSwitch(
  api: ApiClient,
  request: { on: boolean; reason: string },
): Promise<z.infer<typeof putKillSwitchResponseSchema>> {
  return api.call(`${BASE}/kill-switch`, {
    method: 'PUT',
    body: request,
    parse: (body) => putKillSwitchResponseSchema.parse(body),
  });
}

/** Every hold the caller may see, or (imei) the device's hold if it has one. */
export function listHolds(api: ApiClient, imei: string | null, signal?: AbortSignal): Promise<Hold[]> {
  const path = imei ? `${BASE}/holds?imei=${encodeURIComponent(imei)}` : `${BASE}/holds`;
  return api
    .call(path, { parse: (body) => listHoldsResponseSchema.parse(body), ...withSignal(signal) })
    .then((reply) => reply.items);
}

export function listFailures(api: ApiClient, imei: string, signal?: AbortSignal): Promise<FailedAction[]> {
  return api
    .call(`${BASE}/failures?imei=${encodeURIComponent(imei)}`, {
      parse: (body) => listFailuresResponseSchema.parse(body),
      ...withSignal(signal),
    })
    .then((reply) => reply.items);
}

export function putHold(
  api: ApiClient,
  request: { imei: string; reason: string },
): Promise<z.infer<typeof putHoldResponseSchema>> {
  return api.call(`${BASE}/holds/${encodeURIComponent(request.imei)}`, {
    method: 'PUT',
    body: { reason: request.reason },
    parse: (body) => putHoldResponseSchema.parse(body),
  });
}

export function removeHold(api: ApiClient, imei: string) {
  return api.call(`${BASE}/holds/${encodeURIComponent(imei)}`, {
    method: 'DELETE',
    parse: (body) => statusMessageSchema.parse(body),
  });
}

export function listReleases(
  api: ApiClient,
  state: ReleaseState,
  signal?: AbortSignal,
): Promise<ReleaseRequest[]> {
  return api
    .call(`${BASE}/releases?state=${encodeURIComponent(state)}`, {
      parse: (body) => listReleasesResponseSchema.parse(body),
      ...withSignal(signal),
    })
    .then((reply) => reply.items);
}

export function decideRelease(
  api: ApiClient,
  request: { id: number; decision: 'approve' | 'reject'; reason?: string },
): Promise<z.infer<typeof decideReleaseResponseSchema>> {
  return api.call(`${BASE}/releases/${request.id}/${request.decision}`, {
    method: 'POST',
    body: request.reason ? { reason: request.reason } : {},
    parse: (body) => decideReleaseResponseSchema.parse(body),
  });
}

export function listRuns(api: ApiClient, signal?: AbortSignal): Promise<CollectionsRun[]> {
  return api
    .call(`${BASE}/runs`, { parse: (body) => listRunsResponseSchema.parse(body), ...withSignal(signal) })
    .then((reply) => reply.items);
}
