/** Node-only parts of the contract (kept out of the browser bundle). */
export * from './envelope/node';
export * from './mqtt/node';
