export * from './histogram.ts';
export * from './classify.ts';
export * from './duration.ts';
export * from './burn/index.ts';
export * from './detect/index.ts';
export * from './attribution/index.ts';
export * from './hints/index.ts';
export * from './edges.ts';
