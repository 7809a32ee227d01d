/**
 * The signed-in account's menu in the top bar (not in the spec): its email, and the way to its own
 * two-factor authentication, which a USER may turn on there.
 */
import { Button, Menu } from '@mantine/core';
import { Link, useLocation } from 'react-router';
import { MFA_LABELS } from '../../features/mfa/labels';
import { TWO_FACTOR_PATH } from '../../pages/Auth/TwoFactor/paths';

export function AccountMenu({ email }: { email: string }) {
  const { pathname } = useLocation();
  return (
    <Menu position="bottom-end" withinPortal>
      <Menu.Target>
        <Button variant="subtle" size="compact-sm" aria-label={MFA_LABELS.accountMenu(email)}>
          {email}
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Item component={Link} to={TWO_FACTOR_PATH} state={{ next: pathname }}>
          {MFA_LABELS.title}
        </Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
