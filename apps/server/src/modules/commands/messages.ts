import { MESSAGES } from '@lendlock/contract';

/** What the command calls answer, in words (tests and the console compare them exactly). */
export const COMMAND_MESSAGES = {
  notFound: MESSAGES.commandNotFound,
  notRegistered: MESSAGES.commandNotRegistered,
  released: MESSAGES.commandReleased,
  deenrolled: MESSAGES.commandDeenrolled,
  alreadySent: 'This command has already been sent to the device and can no longer be cancelled.',
  cancelled: 'Command cancelled',
  noSuchCommand: 'No such command',
  higherLevel: 'You cannot cancel a command issued by a higher level.',
  notYourRetailer: 'You can act only on your own retailer devices.',
} as const;
