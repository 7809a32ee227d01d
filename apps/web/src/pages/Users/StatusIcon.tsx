/** The user status icon: a check in a circle for ACTIVE, a barred circle for INACTIVE. */
import type { UserStatus } from '@lendlock/contract';

export function StatusIcon({ status }: { status: UserStatus }) {
  return (
    <svg
      width="18"
      height="18"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <circle cx="12" cy="12" r="9" />
      {status === 'ACTIVE' ? <path d="M8 12.5l2.5 2.5L16 9.5" /> : <path d="M5.7 5.7l12.6 12.6" />}
    </svg>
  );
}
