/** Logout (/logout, /superadmin/logout): end the session server-side, then clear and go to /login. */
import { Center, Loader, Stack, Text } from '@mantine/core';
import { useEffect, useRef } from 'react';
import { useNavigate } from 'react-router';
import { logout } from '../../../api/auth';
import { useServices } from '../../../app/services';
import { LABELS } from '../../../lib/labels';

/** How long the logout call may take before the console signs out anyway. */
const LOGOUT_TIMEOUT_MS = 5000;

export default function LogoutPage() {
  const { api, sessions } = useServices();
  const navigate = useNavigate();
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const token = sessions.get()?.token;
    const signal = AbortSignal.timeout(LOGOUT_TIMEOUT_MS);
    logout(api, { ...(token ? { token } : {}), signal })
      .catch(() => undefined)
      .finally(() => {
        sessions.clear();
        navigate('/login', { replace: true });
      });
  }, [api, sessions, navigate]);

  return (
    <Center p="xl">
      <Stack align="center">
        <Loader />
        <Text>{LABELS.signingOut}</Text>
      </Stack>
    </Center>
  );
}
