import type { AppDeps } from '../deps';
import type { ResponseRow } from '../db/schema';
import { findAnswerOf } from '../chat/research.store';

/** A source of a report: a web page it found or read, or one of the user's documents it read. */
export interface ReportSource {
  title: string;
  url?: string;
  fileId?: string;
}

export interface ResearchReport {
  researchId: string;
  conversationId: string;
  question: string;
  status: ResponseRow['status'];
  model: string;
  createdAt: string;
  /** The report as written (Markdown); empty while it runs and when it stored nothing. */
  report: string;
  sources: ReportSource[];
  /** Why it failed or was cancelled. */
  error?: string;
}

type Part = { type?: string; results?: { link?: string; title?: string }[]; url?: string; title?: string; read?: boolean; fileId?: string; filename?: string };

/**
 * The sources an answer keeps in its parts (docs/research.md, "What is stored for the
 * conversation"): the pages it read, then those its searches found, then the documents it read,
 * each once.
 */
export function sourcesOf(parts: unknown[]): ReportSource[] {
  const seen = new Set<string>();
  const sources: ReportSource[] = [];
  const add = (key: string, source: ReportSource) => {
    if (seen.has(key)) return;
    seen.add(key);
    sources.push(source);
  };
  const all = parts as Part[];
  for (const p of all) if (p?.type === 'web_page.read' && p.read && p.url) add(p.url, { title: p.title || p.url, url: p.url });
  for (const p of all) if (p?.type === 'web_search.completed') for (const r of p.results ?? []) if (r.link) add(r.link, { title: r.title || r.link, url: r.link });
  for (const p of all) if (p?.type === 'read_file.in_progress' && p.fileId) add(`file:${p.fileId}`, { title: p.filename || p.fileId, fileId: p.fileId });
  return sources;
}

/** A research run as a client reads it: its status, and once it finished, its report and sources. */
export async function reportOf(deps: AppDeps, response: ResponseRow): Promise<ResearchReport> {
  const answer = await deps.store.read((tx) => findAnswerOf(tx, response));
  return {
    researchId: response.id,
    conversationId: response.conversationId,
    question: response.input.message,
    status: response.status,
    model: response.model,
    createdAt: new Date(response.createdAt).toISOString(),
    report: answer?.content ?? '',
    sources: answer ? sourcesOf(answer.parts) : [],
    ...(response.error ? { error: response.error } : {}),
  };
}

/** The report as Markdown: the text, then its sources as a numbered list. */
export function reportMarkdown(r: ResearchReport): string {
  const lines: string[] = [];
  if (r.status === 'queued' || r.status === 'in_progress') lines.push(`The research is still running (status ${r.status}).`);
  else if (r.status !== 'completed') lines.push(`The research ${r.status === 'cancelled' ? 'was cancelled' : 'failed'}${r.error ? `: ${r.error}` : '.'}`);
  if (r.report) lines.push(r.report);
  else if (r.status === 'completed') lines.push('The research finished without a report.');
  if (r.sources.length) {
    lines.push('## Sources');
    r.sources.forEach((s, i) => lines.push(`${i + 1}. ${s.url ? `[${s.title}](${s.url})` : `${s.title} (your document ${s.fileId})`}`));
  }
  return lines.join('\n\n');
}
