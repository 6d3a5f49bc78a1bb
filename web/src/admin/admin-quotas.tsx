import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { AdminTable } from './admin-table';
import type { ModelSetting } from './connections-api';

/** A tier's allowances and a model's price, as `admin/getUsageQuotas` answers them (docs/usage.md). */
interface Tier {
  name: string;
  period: 'day' | 'week' | 'month';
  tokens: number | null;
  researchRuns: number | null;
  images: number | null;
}
interface Price {
  model: string;
  inputPerMillion: number;
  outputPerMillion: number;
  perUnit: number;
  perRequest: number;
}
interface Quotas {
  tiers: Tier[];
  prices: Price[];
}
type Outcome = { error?: string; done?: string };

const PERIODS = { day: 'a day', week: 'a week (from Monday)', month: 'a month' } as const;
const EMPTY_TIER = { name: '', period: 'day' as Tier['period'], tokens: '', researchRuns: '', images: '' };
const EMPTY_PRICE = { model: '', inputPerMillion: '', outputPerMillion: '', perUnit: '', perRequest: '' };
const limitOf = (n: number | null) => (n === null ? 'No limit' : n.toLocaleString());
/** A box left empty is "no limit" for an allowance (null) and 0 for a price (left out). */
const allowance = (text: string) => (text.trim() === '' ? null : Number(text));

/**
 * Quotas (`admin/getUsageQuotas`, `admin/setUsageTier`, `admin/setModelPrice` and their removals):
 * what each subscription tier may use a period, and what a model costs in bonus credits once an
 * allowance is used up. The same rows as `parley tier` and `parley price`.
 */
export function AdminQuotas({ version }: { version: number }) {
  const [quotas, setQuotas] = useState<Quotas>();
  const [models, setModels] = useState<string[]>([]);
  const [tier, setTier] = useState(EMPTY_TIER);
  const [price, setPrice] = useState(EMPTY_PRICE);
  const [note, setNote] = useState<Outcome>({});
  useEffect(() => {
    call<Quotas>('admin/getUsageQuotas').then(setQuotas, (err) => setNote({ error: messageOf(err) }));
  }, []);
  // The chat models offered as the price's model; images, speech and embeddings models are typed.
  useEffect(() => {
    call<{ models: ModelSetting[] }>('admin/listModelSettings').then((r) => setModels(r.models.map((m) => m.id)), () => setModels([]));
  }, [version]);
  const act = async (op: string, body: unknown, done: string) => {
    try {
      setQuotas(await call<Quotas>(op, body));
      setNote({ done });
      return true;
    } catch (err) {
      setNote({ error: messageOf(err) });
      return false;
    }
  };
  const saveTier = async (e: Event) => {
    e.preventDefault();
    const name = tier.name.trim();
    const body = { name, period: tier.period, tokens: allowance(tier.tokens), researchRuns: allowance(tier.researchRuns), images: allowance(tier.images) };
    if (await act('admin/setUsageTier', body, `${name}'s allowances saved.`)) setTier(EMPTY_TIER);
  };
  const savePrice = async (e: Event) => {
    e.preventDefault();
    const given = Object.fromEntries((['inputPerMillion', 'outputPerMillion', 'perUnit', 'perRequest'] as const).filter((k) => price[k].trim() !== '').map((k) => [k, Number(price[k])]));
    if (await act('admin/setModelPrice', { model: price.model.trim(), ...given }, `${price.model.trim()}'s price saved.`)) setPrice(EMPTY_PRICE);
  };
  const editTier = (t: Tier) => setTier({ name: t.name, period: t.period, tokens: t.tokens?.toString() ?? '', researchRuns: t.researchRuns?.toString() ?? '', images: t.images?.toString() ?? '' });
  const editPrice = (p: Price) => setPrice({ model: p.model, inputPerMillion: String(p.inputPerMillion), outputPerMillion: String(p.outputPerMillion), perUnit: String(p.perUnit), perRequest: String(p.perRequest) });
  const tierField = (key: keyof typeof EMPTY_TIER) => (e: Event) => setTier({ ...tier, [key]: (e.currentTarget as HTMLInputElement).value });
  const priceField = (key: keyof typeof EMPTY_PRICE) => (e: Event) => setPrice({ ...price, [key]: (e.currentTarget as HTMLInputElement).value });
  const number = (value: string, onInput: (e: Event) => void, step: string) => <input type="number" min={0} step={step} value={value} onInput={onInput} placeholder={step === '1' ? 'No limit' : '0'} />;

  return (
    <section class="admin-section" aria-labelledby="admin-quotas">
      <h3 id="admin-quotas">Quotas and prices</h3>
      <p class="hint">
        What each subscription tier may use a period (tokens of chat, research, groups and <code>/v1</code>; research runs; images), and what a model costs in bonus credits once its user's
        allowance is used up. A tier without allowances limits nothing; a model without a price cannot be paid for with credits. Until a tier has allowances, nothing is limited. Every
        instance uses a change within seconds.
      </p>
      <Note {...note} />
      <h4>Tiers</h4>
      {quotas?.tiers.length === 0 && <p class="hint">No tier has allowances: nobody is limited.</p>}
      {quotas && quotas.tiers.length > 0 && (
        <AdminTable caption="Tiers' allowances" columns={['Tier', 'Period', 'Tokens', 'Research runs', 'Images']} actions scrollLabel="Tiers' allowances">
          {quotas.tiers.map((t) => (
            <tr key={t.name}>
              <th scope="row">{t.name}</th>
              <td>{PERIODS[t.period]}</td>
              <td>{limitOf(t.tokens)}</td>
              <td>{limitOf(t.researchRuns)}</td>
              <td>{limitOf(t.images)}</td>
              <td class="admin-row-buttons">
                <button type="button" aria-label={`Edit ${t.name}`} onClick={() => editTier(t)}>
                  Edit
                </button>
                <button type="button" aria-label={`Remove ${t.name}'s allowances`} onClick={() => confirm(`${t.name} will limit nothing. Remove its allowances?`) && act('admin/removeUsageTier', { name: t.name }, `${t.name} limits nothing now.`)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </AdminTable>
      )}
      <form class="admin-form" onSubmit={saveTier} aria-label="A tier's allowances">
        <div class="admin-fields">
          <label>
            Tier
            <input required maxLength={40} value={tier.name} onInput={tierField('name')} placeholder="FREE" />
          </label>
          <label>
            Period (UTC)
            <select value={tier.period} onChange={tierField('period')}>
              {Object.entries(PERIODS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Tokens {number(tier.tokens, tierField('tokens'), '1')}
          </label>
          <label>
            Research runs {number(tier.researchRuns, tierField('researchRuns'), '1')}
          </label>
          <label>
            Images {number(tier.images, tierField('images'), '1')}
          </label>
        </div>
        <p class="hint">An empty box is no limit. Saving replaces the tier's allowances.</p>
        <button type="submit">Save allowances</button>
      </form>

      <h4>Prices in credits</h4>
      {quotas?.prices.length === 0 && <p class="hint">No model has a price: past an allowance, nothing can be paid for with credits.</p>}
      {quotas && quotas.prices.length > 0 && (
        <AdminTable caption="Models' prices" columns={['Model', 'Per million input tokens', 'Per million output tokens', 'Per unit', 'Per call']} actions scrollLabel="Models' prices">
          {quotas.prices.map((p) => (
            <tr key={p.model}>
              <th scope="row">{p.model}</th>
              <td>{p.inputPerMillion}</td>
              <td>{p.outputPerMillion}</td>
              <td>{p.perUnit}</td>
              <td>{p.perRequest}</td>
              <td class="admin-row-buttons">
                <button type="button" aria-label={`Edit the price of ${p.model}`} onClick={() => editPrice(p)}>
                  Edit
                </button>
                <button type="button" aria-label={`Remove the price of ${p.model}`} onClick={() => confirm(`${p.model} will not be paid for with credits. Remove its price?`) && act('admin/removeModelPrice', { model: p.model }, `${p.model} has no price now.`)}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </AdminTable>
      )}
      <form class="admin-form" onSubmit={savePrice} aria-label="A model's price">
        <div class="admin-fields">
          <label>
            Model
            <input required maxLength={300} list="admin-price-models" value={price.model} onInput={priceField('model')} placeholder="connection/model" />
            <datalist id="admin-price-models">
              {models.map((m) => (
                <option key={m} value={m} />
              ))}
            </datalist>
          </label>
          <label>
            Per million input tokens {number(price.inputPerMillion, priceField('inputPerMillion'), 'any')}
          </label>
          <label>
            Per million output tokens {number(price.outputPerMillion, priceField('outputPerMillion'), 'any')}
          </label>
          <label>
            Per unit (image, second, character) {number(price.perUnit, priceField('perUnit'), 'any')}
          </label>
          <label>
            Per call {number(price.perRequest, priceField('perRequest'), 'any')}
          </label>
        </div>
        <p class="hint">An empty box is 0. Saving replaces the model's price.</p>
        <button type="submit">Save price</button>
      </form>
    </section>
  );
}
