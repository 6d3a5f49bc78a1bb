import { post } from '../shared/api';

/** Why a setup link cannot be used, as `setup/checkToken` and `setup/createAdmin` say in `data.reason`. */
export type Refusal = 'unknown' | 'used' | 'expired' | 'done';

/** A setup operation's answer: its value, why the link was refused, or another error's message. */
export type SetupAnswer<T> = { ok: true; value: T } | { ok: false; refusal?: Refusal; message: string };

/**
 * The setup operations are public: the token is the credential. Their refusals carry a reason the
 * page turns into its own explanation, which the shared `call` does not keep.
 */
export async function setupCall<T>(operation: string, body: unknown): Promise<SetupAnswer<T>> {
  let res: Response;
  try {
    res = await post(operation, body);
  } catch {
    return { ok: false, message: 'Parley could not be reached. Check that `parley serve` is still running, then try again.' };
  }
  const json = (await res.json().catch(() => undefined)) as { message?: string; data?: { reason?: Refusal } } | undefined;
  if (res.ok) return { ok: true, value: json as T };
  return { ok: false, refusal: json?.data?.reason, message: json?.message ?? `The server answered ${res.status}.` };
}
