/** What the command calls answer, in words (tests and the console compare them exactly). */
export const COMMAND_MESSAGES = {
  notFound: 'not found',
  released: 'This device has been released and accepts no further commands.',
  deenrolled: 'This device is de-enrolled: it must register again before it can receive commands.',
  alreadySent: 'This command has already been sent to the device and can no longer be cancelled.',
  cancelled: 'Command cancelled',
  noSuchCommand: 'No such command',
  higherLevel: 'You cannot cancel a command issued by a higher level.',
} as const;
