export * from './encoding';
export * from './formula';
export * from './imeiCsv';
export * from './invalidRows';
export * from './notifyCsv';
export * from './stream';
