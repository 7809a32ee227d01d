import { screenByName, sidebarFor } from '@lendlock/contract';
import { NavLink, ScrollArea } from '@mantine/core';
import { Link, useLocation } from 'react-router';
import { useSession } from '../session/useSession';

/** The left menu for a user level, in the contract's order (SIDEBAR). */
export function Sidebar({ level, onNavigate }: { level: string; onNavigate?: () => void }) {
  const { pathname } = useLocation();
  // Key Management shows for a USER holding its permission (ADMIN and SUPERADMIN always).
  const held = useSession()?.permissions.map((permission) => permission.permission_name) ?? [];
  return (
    <ScrollArea type="auto">
      {sidebarFor(level, held).map(({ name, path }) => (
        <NavLink
          key={name}
          component={Link}
          to={path}
          label={screenByName(name)?.label ?? name}
          active={pathname === path || pathname === `${path}/`}
          data-testid={`nav-${name}`}
          {...(onNavigate ? { onClick: onNavigate } : {})}
        />
      ))}
    </ScrollArea>
  );
}
