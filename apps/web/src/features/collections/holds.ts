/** A hold's inputs, checked with the contract's rules (what the server checks): the IMEI and the reason. */
import { imeiParamsSchema, putHoldRequestSchema } from '@lendlock/contract';

const firstProblem = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.success ? null : (result.error?.issues[0]?.message ?? null);

/** Required, at most 500 characters. */
export function validateHoldReason(reason: string): string | null {
  return firstProblem(putHoldRequestSchema.shape.reason.safeParse(reason));
}

/** 15 digits. */
export function validateHoldImei(imei: string): string | null {
  return firstProblem(imeiParamsSchema.shape.imei.safeParse(imei.trim()));
}
