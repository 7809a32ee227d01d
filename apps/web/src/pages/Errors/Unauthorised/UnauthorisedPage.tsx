import { MESSAGES } from '@lendlock/contract';
import { Alert } from '@mantine/core';

/** The unauthorised page: shown in place of a screen the user has no permission for. */
export function UnauthorisedPage() {
  return (
    <Alert color="red" role="alert" data-testid="unauthorised">
      {MESSAGES.unauthorised}
    </Alert>
  );
}
