/** An error the API answered, in its own words (every admin form shows what went wrong). */
export const messageOf = (err: unknown) => (err instanceof Error ? err.message : 'Something went wrong.');

/** A short note after an action: the error in an alert, or what was done as a polite status. */
export function Note({ error, done }: { error?: string; done?: string }) {
  return (
    <>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <p role="status" class="hint note-status">
        {!error && done}
      </p>
    </>
  );
}
