import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { useOutcome, when } from './settings-shared';

interface AccountType {
  accountType: string;
  isLocked: boolean;
}
interface Subscription {
  tier: string;
  isActive: boolean;
  expiresAt: string | null;
  productId: string | null;
}

/** The values `preferences/setAccountType` accepts (ACCOUNT_TYPES on the server), in words. */
const ACCOUNT_TYPES: Record<string, string> = {
  GENERAL: 'General',
  STUDENT: 'Student',
  PROFESSIONAL: 'Professional',
  DEVELOPER: 'Developer',
};

/** Who the account is for, its subscription and its bonus credits. */
export function AccountSection() {
  const [type, setType] = useState<AccountType>();
  const [subscription, setSubscription] = useState<Subscription>();
  const [balance, setBalance] = useState<number>();
  const outcome = useOutcome();
  useEffect(() => {
    const failed = (err: unknown) => outcome.failed(err, 'Loading your account');
    call<AccountType>('preferences/getAccountType').then(setType, failed);
    call<Subscription>('subscription/getStatus').then(setSubscription, failed);
    call<{ bonusBalance: number }>('credits/getBalance').then((r) => setBalance(r.bonusBalance), failed);
  }, []);

  const choose = async (accountType: string) => {
    outcome.clear();
    try {
      setType(await call<AccountType>('preferences/setAccountType', { accountType }));
      outcome.done('Saved');
    } catch (err) {
      // Re-set the same object so the select shows the stored type again.
      setType((t) => (t ? { ...t } : t));
      outcome.failed(err, 'Changing the account type');
    }
  };

  return (
    <section class="settings-section" aria-labelledby="account-title">
      <h3 id="account-title">Account</h3>
      {type && (
        <div class="field">
          <label for="account-type">Account type</label>
          <select id="account-type" value={type.accountType} disabled={type.isLocked} aria-describedby={type.isLocked ? 'account-type-locked' : undefined} onChange={(e) => choose(e.currentTarget.value)}>
            {[...new Set([...Object.keys(ACCOUNT_TYPES), type.accountType])].map((v) => (
              <option key={v} value={v}>
                {ACCOUNT_TYPES[v] ?? v}
              </option>
            ))}
          </select>
          {type.isLocked && (
            <p id="account-type-locked" class="hint">
              Your administrator has set this account type; it cannot be changed here.
            </p>
          )}
        </div>
      )}
      <dl class="facts">
        {subscription && (
          <>
            <dt>Subscription</dt>
            <dd>{subscription.tier}</dd>
            <dt>Active</dt>
            <dd>{subscription.isActive ? 'Yes' : 'No'}</dd>
            <dt>Expires</dt>
            <dd>{subscription.expiresAt ? when(subscription.expiresAt) : 'Never'}</dd>
            <dt>Product</dt>
            <dd>{subscription.productId ?? 'None'}</dd>
          </>
        )}
        {balance !== undefined && (
          <>
            <dt>Bonus credits</dt>
            <dd>{balance}</dd>
          </>
        )}
      </dl>
      {outcome.view}
    </section>
  );
}
