import { type BatchProgress, COMMAND_DEFINITIONS, type CommandDefinition } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import {
  batchKind,
  batchSummary,
  canResume,
  lastImeiWindow,
  panelMode,
  progressPercent,
  progressPollMs,
  resumeOptions,
  uploadLevel,
} from './batchRules';

const byScreen = (screen: string): CommandDefinition => {
  const definition = COMMAND_DEFINITIONS.find((d) => d.screen === screen);
  if (!definition) throw new Error(screen);
  return definition;
};

describe('what a command uploads', () => {
  it('Notify takes the Notify CSV, every other command the IMEI CSV', () => {
    expect(batchKind(byScreen('enableNotification'))).toBe('notify');
    for (const d of COMMAND_DEFINITIONS.filter((d) => d.batch && d.input !== 'notify')) {
      expect(batchKind(d)).toBe('imei');
    }
  });

  it('the graded batch sends its grade, the credit scripts level default, the others no level', () => {
    expect(uploadLevel(byScreen('gradeDisableApp'), 'level2')).toBe('level2');
    expect(uploadLevel(byScreen('gradeDisableApp'), '')).toBeUndefined();
    expect(uploadLevel(byScreen('enableCredit'), '')).toBe('default');
    expect(uploadLevel(byScreen('revokeCredit'), '')).toBe('default');
    expect(uploadLevel(byScreen('lockDevice'), 'level1')).toBeUndefined();
    expect(uploadLevel(byScreen('disableApp'), '')).toBeUndefined();
  });
});

describe('the resume card', () => {
  it('has no Cancel on Notify and Set Wallpaper; only Set Wallpaper downloads the processed IMEIs', () => {
    expect(resumeOptions(byScreen('enableNotification'))).toEqual({
      cancel: false,
      processedDownload: false,
    });
    expect(resumeOptions(byScreen('setWallpaper'))).toEqual({ cancel: false, processedDownload: true });
    expect(resumeOptions(byScreen('lockDevice'))).toEqual({ cancel: true, processedDownload: false });
    expect(resumeOptions(byScreen('removeWallpaper'))).toEqual({ cancel: true, processedDownload: false });
  });

  it('a batch resumes when its last IMEI is among its processed results, or when nothing was processed', () => {
    const results = [
      { imei: '356938035643809', validate: 'found' as const },
      { imei: '356938035643810', validate: 'not found' as const },
      { imei: '356938035643811', validate: null },
    ];
    expect(canResume({ lastimei: '356938035643810', processed: 2 }, results)).toBe(true);
    // Present in the batch but not processed, or not in the batch at all: the spec's alert.
    expect(canResume({ lastimei: '356938035643811', processed: 2 }, results)).toBe(false);
    expect(canResume({ lastimei: '999999999999999', processed: 2 }, results)).toBe(false);
    expect(canResume({ lastimei: null, processed: 0 }, [])).toBe(true);
    expect(canResume({ lastimei: null, processed: 5 }, results)).toBe(false);
  });

  it('looks for the last IMEI from the S.No. of the processed count on', () => {
    expect(lastImeiWindow({ processed: 0 })).toEqual({ offset: 0, limit: 1000 });
    expect(lastImeiWindow({ processed: 5_000 })).toEqual({ offset: 4_999, limit: 1000 });
  });
});

describe("following a batch's phase", () => {
  it('running shows the overlay, paused and interrupted the resume card, complete the results', () => {
    expect(panelMode('running')).toBe('running');
    expect(panelMode('paused')).toBe('resume');
    expect(panelMode('interrupted')).toBe('resume');
    expect(panelMode('complete')).toBe('done');
    expect(panelMode('cancelled')).toBe('cancelled');
  });

  it('polls every 500 ms while running (or not yet known), every 2 s while stopped, never once finished', () => {
    expect(progressPollMs(undefined)).toBe(500);
    expect(progressPollMs({ phase: 'running' })).toBe(500);
    expect(progressPollMs({ phase: 'paused' })).toBe(2000);
    expect(progressPollMs({ phase: 'interrupted' })).toBe(2000);
    expect(progressPollMs({ phase: 'complete' })).toBe(false);
    expect(progressPollMs({ phase: 'cancelled' })).toBe(false);
  });
});

describe('summary math', () => {
  it('the progress bar is processed of valid, within 0–100', () => {
    expect(progressPercent({ processed: 0, valid: 0 })).toBe(0);
    expect(progressPercent({ processed: 25, valid: 100 })).toBe(25);
    expect(progressPercent({ processed: 100_000, valid: 100_000 })).toBe(100);
    expect(progressPercent({ processed: 120, valid: 100 })).toBe(100);
  });

  it('the summary lists total, valid, invalid, found and not found in that order', () => {
    const progress: Pick<BatchProgress, 'total' | 'valid' | 'invalid' | 'found' | 'notFound'> = {
      total: 10,
      valid: 10,
      invalid: 0,
      found: 3,
      notFound: 7,
    };
    expect(batchSummary(progress)).toEqual([
      { key: 'total', value: 10 },
      { key: 'valid', value: 10 },
      { key: 'invalid', value: 0 },
      { key: 'found', value: 3 },
      { key: 'notFound', value: 7 },
    ]);
  });
});
