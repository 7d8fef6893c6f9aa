export * from './vocab.ts';
export * from './time.ts';
export * from './alert-keys.ts';
export * from './hint-attrs.ts';
export * from './vocab-schemas.ts';
export * from './api/index.ts';
export * from './openapi30.ts';
export * from './client/request.ts';
