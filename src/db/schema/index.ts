// Every table of Parley. Each domain keeps its tables in its own file here so that
// drizzle-kit sees one schema and one migration history.
export * from './users';
export * from './conversations';
export * from './widgets';
export * from './bookmarks';
export * from './credits';
export * from './notifications';
export * from './responses';
export * from './groups';
export * from './leases';
export * from './rate-buckets';
export * from './files';
export * from './news';
export * from './miniapps';
export * from './memories';
export * from './feedback';
export * from './support';
export * from './setup';
export * from './connections';
export * from './usage';
export * from './api-responses';
export * from './tools';
export * from './assistants';
export * from './mcp';
export * from './oauth';
export * from './video';
