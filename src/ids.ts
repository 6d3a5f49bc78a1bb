/** Time-sortable identifiers (UUIDv7): rows inserted later sort later, which keeps indexes append-mostly. */
export const newId = (): string => Bun.randomUUIDv7();

/** ISO 8601 UTC with milliseconds, the interface's timestamp format. */
export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null | undefined): string | null => (ms == null ? null : iso(ms));
