/**
 * Splits streamed content into reasoning and answer text for models that inline their
 * reasoning as `<think>…</think>` (DeepSeek-R1 and Qwen distils on Ollama/llama.cpp).
 * Tags may be cut across chunks, so a possible tag prefix at a chunk's end is held back.
 */
export class ThinkSplitter {
  private inside = false;
  private held = '';

  /** Feed a chunk; returns the pieces in order. */
  push(chunk: string): { kind: 'reasoning' | 'text'; text: string }[] {
    let buf = this.held + chunk;
    this.held = '';
    const out: { kind: 'reasoning' | 'text'; text: string }[] = [];
    while (buf) {
      const tag = this.inside ? '</think>' : '<think>';
      const at = buf.indexOf(tag);
      if (at >= 0) {
        if (at > 0) out.push({ kind: this.inside ? 'reasoning' : 'text', text: buf.slice(0, at) });
        buf = buf.slice(at + tag.length);
        this.inside = !this.inside;
        out.push({ kind: this.inside ? 'reasoning' : 'text', text: '' });
        continue;
      }
      const keep = partialSuffix(buf, tag);
      const emit = buf.slice(0, buf.length - keep);
      if (emit) out.push({ kind: this.inside ? 'reasoning' : 'text', text: emit });
      this.held = buf.slice(buf.length - keep);
      break;
    }
    return out.filter((p) => p.text !== '' || p.kind === 'text');
  }

  /** End of stream: whatever was held back is plain content. */
  flush(): { kind: 'reasoning' | 'text'; text: string }[] {
    const rest = this.held;
    this.held = '';
    return rest ? [{ kind: this.inside ? 'reasoning' : 'text', text: rest }] : [];
  }

  get inReasoning(): boolean {
    return this.inside;
  }
}

/** Length of the longest suffix of `s` that is a proper prefix of `tag`. */
function partialSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (s.endsWith(tag.slice(0, n))) return n;
  return 0;
}

/** Remove `<think>` blocks from a whole (non-streamed) answer. */
export const stripThink = (s: string) => s.replace(/<think>[\s\S]*?(<\/think>|$)/g, '').trim();
