import './tool-approval.css';
import { useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import type { PendingApproval } from './answer-parts';

type Decision = 'approve' | 'deny';
type Scope = 'once' | 'conversation';

/** The choices, in the order shown: the safe one (once) before the standing one. */
const CHOICES: { decision: Decision; scope: Scope; text: string }[] = [
  { decision: 'approve', scope: 'once', text: 'Allow once' },
  { decision: 'approve', scope: 'conversation', text: 'Always allow here' },
  { decision: 'deny', scope: 'once', text: 'Deny' },
  { decision: 'deny', scope: 'conversation', text: 'Always deny here' },
];

/**
 * The calls of "ask first" tools an answer waits on (docs/chat.md, "Tool approval"): what the
 * model wants to run, with which arguments, and the user's answer. The prompt goes away when the
 * stream says how it was answered (`tool_call.approval_resolved`), from this tab or another.
 */
export function ToolApprovals({ responseId, approvals }: { responseId: string; approvals: PendingApproval[] }) {
  return (
    <>
      {approvals.map((a) => (
        <ApprovalPrompt key={a.itemId} responseId={responseId} approval={a} />
      ))}
    </>
  );
}

function ApprovalPrompt({ responseId, approval }: { responseId: string; approval: PendingApproval }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [sent, setSent] = useState<string>();
  const titleId = `approval-${approval.itemId}`;
  const args = JSON.stringify(approval.arguments, null, 2);
  const answer = async (decision: Decision, scope: Scope) => {
    setBusy(true);
    setError(undefined);
    try {
      await call('chat/approveToolCall', { responseId, itemId: approval.itemId, decision, scope });
      setSent(decision === 'approve' ? 'Allowed: running it…' : 'Denied.');
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <section class="tool-approval" role="group" aria-labelledby={titleId}>
      <p id={titleId}>
        <strong>Use {approval.label}?</strong> <span class="hint">The assistant waits for your answer before it runs it.</span>
      </p>
      {args !== '{}' && (
        <details>
          <summary>What it would send</summary>
          <pre class="plain">{args}</pre>
        </details>
      )}
      <div class="tool-approval-buttons">
        {CHOICES.map((c) => (
          <button key={c.text} type="button" disabled={busy} onClick={() => answer(c.decision, c.scope)}>
            {c.text}
          </button>
        ))}
      </div>
      <Note error={error} done={sent} />
    </section>
  );
}
