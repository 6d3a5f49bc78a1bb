import './tool-approval.css';
import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf } from '../shared/note';

interface Rule {
  toolName: string;
  decision: 'approve' | 'deny';
  createdAt: string;
}

/**
 * The standing answers the user gave "ask first" tools in this conversation ("Always allow here",
 * "Always deny here": chat/listToolRules), each with **Ask again** (chat/deleteToolRule), so an
 * answer given once is not for good. Nothing is shown while there are none. Read again when the
 * conversation changes (`version`): a rule is made while an answer waits.
 */
export function ToolRules({ conversationId, version }: { conversationId: string; version: number }) {
  const [rules, setRules] = useState<Rule[]>([]);
  const [error, setError] = useState<string>();
  const load = () => call<{ rules: Rule[] }>('chat/listToolRules', { conversationId }).then((r) => setRules(r.rules), () => setRules([]));
  useEffect(() => void load(), [conversationId, version]);
  if (!rules.length) return null;
  const forget = (rule: Rule) =>
    call('chat/deleteToolRule', { conversationId, toolName: rule.toolName }).then(
      () => (setError(undefined), load()),
      (err) => setError(messageOf(err)),
    );
  return (
    <details class="tool-rules">
      <summary>Standing tool answers ({rules.length})</summary>
      <ul aria-label="Standing tool answers">
        {rules.map((r) => (
          <li key={r.toolName}>
            {r.decision === 'approve' ? 'Always allowed' : 'Always denied'}: <code>{r.toolName}</code>{' '}
            <button type="button" aria-label={`Ask again before ${r.toolName}`} onClick={() => void forget(r)}>
              Ask again
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </details>
  );
}
