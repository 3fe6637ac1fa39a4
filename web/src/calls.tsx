import { useState } from 'preact/hooks';
import { post } from './api';
import { ApprovalDialog } from './components';
import type { ApprovalRequest, CallOutcome } from './types';

type Answer = { decision: 'allow' | 'deny'; remember?: 'session' };
let ask: ((request: ApprovalRequest) => Promise<Answer>) | undefined;

/**
 * Posts a tool call and, while the server's gate asks, puts each question to the person in the approval dialog
 * and sends the answer back; resolves with the final outcome (done or denied).
 */
export async function callThroughGate(
  path: string,
  body: unknown,
): Promise<Exclude<CallOutcome, { status: 'ask' }>> {
  let outcome = await post<CallOutcome>(path, body);
  while (outcome.status === 'ask') {
    const answer = ask ? await ask(outcome.request) : { decision: 'deny' as const };
    outcome = await post<CallOutcome>(`/approvals/${encodeURIComponent(outcome.approvalId)}`, answer);
  }
  return outcome;
}

/** Where the approval dialog lives: mounted once, at the root. */
export function ApprovalHost() {
  const [question, setQuestion] = useState<{ request: ApprovalRequest; resolve: (a: Answer) => void }>();
  ask = (request) => new Promise<Answer>((resolve) => setQuestion({ request, resolve }));
  if (!question) return null;
  return (
    <ApprovalDialog
      request={question.request}
      onAnswer={(decision, remember) => {
        setQuestion(undefined);
        question.resolve({ decision, ...(remember ? { remember } : {}) });
      }}
    />
  );
}
