/** The screens the one CommandScreen renders: every row of the definition table and its aliases (`batch`). */
import { commandForScreen, SCREENS, type ScreenName } from '@lendlock/contract';

export const COMMAND_SCREEN_NAMES: readonly ScreenName[] = SCREENS.filter(
  (screen) => commandForScreen(screen.name) !== undefined,
).map((screen) => screen.name);
