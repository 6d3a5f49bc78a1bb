-- Vectors as float32 bytes kept in the row (src/db/vector-column.ts): base64 text of 8,192 bytes
-- (1,536 dimensions) went out of line to the TOAST table, and reading a search's candidates back
-- cost a TOAST look-up each. STORAGE MAIN keeps the vector in the row while the chunk's text is
-- compressed or moved out first; toast_tuple_target at its maximum lets a row fill the page
-- before anything is moved. The type change rewrites the table under the new settings.
ALTER TABLE "file_chunks" SET (toast_tuple_target = 8160), ALTER COLUMN "embedding" SET STORAGE MAIN, ALTER COLUMN "embedding" SET DATA TYPE bytea USING decode("embedding", 'base64');
