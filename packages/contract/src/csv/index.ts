export * from './encoding';
export * from './formula';
export * from './imeiCsv';
export * from './invalidRows';
export * from './loansCsv';
export * from './notifyCsv';
export * from './paymentsCsv';
export * from './stream';
