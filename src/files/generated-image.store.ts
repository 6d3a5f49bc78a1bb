import { and, eq, inArray } from 'drizzle-orm';
import type { FileRow } from '../db/schema';
import { getRow, type Tx, type Work } from '../db/work';

/**
 * The image a tool call already made for the user, found by the name that call gives it: a
 * restart that runs the call again (src/files/image.tools.ts) finds it instead of making and
 * paying for a second one. Uploads never match, whatever their names.
 */
export function* findGeneratedFile({ db, t }: Tx, userId: string, filenames: string[]): Work<FileRow | undefined> {
  const f = t.files;
  return yield* getRow(db.select().from(f).where(and(eq(f.userId, userId), eq(f.source, 'generated'), inArray(f.filename, filenames))).limit(1));
}
