export * from './formula';
export * from './imeiCsv';
export * from './notifyCsv';
export * from './stream';
