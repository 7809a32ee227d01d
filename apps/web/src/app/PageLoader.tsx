import { Center, Loader } from '@mantine/core';
import { LABELS } from '../lib/labels';

/** Fallback while a lazily loaded page arrives. */
export function PageLoader() {
  return (
    <Center p="xl">
      <Loader aria-label={LABELS.loading} />
    </Center>
  );
}
