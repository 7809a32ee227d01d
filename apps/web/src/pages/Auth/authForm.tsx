/**
 * What the password pages share (Forgot Password, Reset Your Password): check the form, call the server,
 * and show its answer (green, a status) or the failure (red, an alert) under the fields.
 */
import { Text } from '@mantine/core';
import { useState } from 'react';

export interface FormOutcome {
  ok: boolean;
  text: string;
}

export function useAuthForm<R extends { message: string }>(options: {
  /** The form's own check: a message, or null when the form may be sent. */
  validate: () => string | null;
  send: () => Promise<R>;
  failureText: (failure: unknown) => string;
}) {
  const [outcome, setOutcome] = useState<FormOutcome | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const run = async () => {
    const invalid = options.validate();
    setOutcome(invalid ? { ok: false, text: invalid } : null);
    if (invalid) return;
    setSubmitting(true);
    try {
      const reply = await options.send();
      setOutcome({ ok: true, text: reply.message });
    } catch (failure) {
      setOutcome({ ok: false, text: options.failureText(failure) });
    } finally {
      setSubmitting(false);
    }
  };
  return { outcome, submitting, run };
}

export function OutcomeText({ outcome }: { outcome: FormOutcome | null }) {
  if (!outcome) return null;
  return (
    <Text c={outcome.ok ? 'green' : 'red'} size="sm" role={outcome.ok ? 'status' : 'alert'}>
      {outcome.text}
    </Text>
  );
}
