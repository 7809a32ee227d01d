/**
 * The operator's time zone on the server. Every dated call takes an optional `timeZone` (the
 * contract's `timeZoneSchema`: an unknown zone is refused with a 400 before the handler runs) and is
 * answered in that zone, else in REPORT_TIMEZONE: its days are that zone's whole days (the contract's
 * `daysInZone`), its exported date-times that zone's wall clock (`dateTimeCells` in lib/xlsx-export.ts).
 */
/** The zone a dated call is answered in: the one the console sent, else REPORT_TIMEZONE. */
export function operatorTimeZone(config: { reportTimeZone: string }, sent: string | undefined): string {
  return sent || config.reportTimeZone;
}
