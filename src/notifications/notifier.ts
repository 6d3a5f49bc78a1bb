/**
 * How the rest of Parley asks for a push. Chat calls `researchStatus` when a deep-research task
 * ends; the notifications domain implements it with Expo's push service. Kept as an interface so
 * a server with push unconfigured (or a test) passes `noopNotifier`.
 */
export type ResearchStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

export interface ResearchStatusPush {
  userId: string;
  conversationId: string;
  responseId?: string;
  status: ResearchStatus;
  /** Short text for the notification body (e.g. the conversation title). */
  title?: string;
}

export interface Notifier {
  /** Deliver a deep-research status push to every push token of the user. Never throws. */
  researchStatus(push: ResearchStatusPush): Promise<void>;
}

export const noopNotifier: Notifier = { researchStatus: async () => {} };
